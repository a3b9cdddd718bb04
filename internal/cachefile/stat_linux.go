package cachefile

import "syscall"

// StatOf returns the metadata of the regular file at path, or false.
func StatOf(path string) (Stat, bool) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return Stat{}, false
	}
	return Stat{Size: st.Size, Mod: st.Mtim.Nano(), Change: st.Ctim.Nano(), Inode: st.Ino, Device: uint64(st.Dev)}, true
}
