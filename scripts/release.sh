#!/usr/bin/env bash
# Cross-compiles mcphost for linux, darwin and windows on amd64 and arm64
# with the version stamped in (mcphost version prints it), packs each with
# LICENSE, README.md, CHANGELOG.md and docs/ (tar.gz; zip for windows), builds an
# MCP bundle (.mcpb) for each with scripts/mcpb.sh, and writes SHA256SUMS.
#
#   scripts/release.sh [VERSION]                 # all six targets into dist/
#   RELEASE_TARGETS="linux/amd64" scripts/release.sh v0.1.0-ci   # a subset
#
# VERSION defaults to `git describe --tags --always --dirty`.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
version=${1:-$(git describe --tags --always --dirty 2>/dev/null || echo devel)}
targets=${RELEASE_TARGETS:-"linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64"}
out=${DIST_DIR:-$repo/dist}
rm -rf "$out" && mkdir -p "$out"

for t in $targets; do
	os=${t%/*} arch=${t#*/}
	exe=mcphost; [ "$os" = windows ] && exe=mcphost.exe
	name=mcphost-$version-$os-$arch
	dir=$out/$name
	mkdir -p "$dir"
	echo "== $name"
	# -tags grpcnotrace: see docs/operations.md, "Memory" (12 MB less executable).
	CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -tags grpcnotrace -trimpath -ldflags "-s -w -X github.com/mcphost/mcphost/cmd/mcphost/internal/cli.version=$version" -o "$dir/$exe" ./cmd/mcphost
	cp -R LICENSE README.md CHANGELOG.md docs "$dir/"
	# Every relative link of the README must resolve inside the archive.
	for l in $(grep -o '](docs/[^)#]*' README.md | cut -c3- | sort -u); do
		[ -e "$dir/$l" ] || { echo "release: README links $l, which the archive lacks"; exit 1; }
	done
	if [ "$os" = "$(go env GOHOSTOS)" ] && [ "$arch" = "$(go env GOHOSTARCH)" ]; then
		got=$("$dir/$exe" version)
		case $got in "mcphost $version "*) echo "$got" ;; *) echo "version not stamped: $got"; exit 1 ;; esac
	fi
	if [ "$os" = windows ]; then
		(cd "$out" && python3 -c 'import shutil,sys; shutil.make_archive(sys.argv[1], "zip", ".", sys.argv[1])' "$name")
	else
		tar -C "$out" -czf "$out/$name.tar.gz" "$name"
	fi
	bash scripts/mcpb.sh "$dir/$exe" "$version" "$os" "$out/$name.mcpb"
	rm -rf "$dir"
done
(cd "$out" && sha256sum -- *.tar.gz *.zip *.mcpb 2>/dev/null >SHA256SUMS || true)
ls -l "$out"
