package plugins

import "syscall"

// statOf returns the metadata of the file at path, or false.
func statOf(path string) (fileStat, bool) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return fileStat{}, false
	}
	return fileStat{Size: st.Size, Mod: st.Mtim.Nano(), Change: st.Ctim.Nano(), Inode: st.Ino, Device: uint64(st.Dev)}, true
}
