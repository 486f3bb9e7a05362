# The image that the podman tests (tests/podman/run.sh) and make try-containers
# (tests/podman/try.sh) run, built offline from this machine's files: sh, sleep and cat, the
# programs given, the fake CUDA driver (libcuda.so.1) where the loader looks, and every library
# they and the shim load. No registry, no network. Sourced.
# shellcheck shell=bash

# fake_image_tar ROOTFS TAR FAKEDIR SHIM PROGRAM=NAME...: makes the image's files in ROOTFS (a
# directory that exists, empty) and their archive TAR, for `podman import TAR IMAGE`; each
# PROGRAM is the image's /usr/bin/NAME.
fake_image_tar() {
	local r=$1 tar=$2 fakedir=$3 shim=$4 libdir f lib prog
	shift 4
	libdir=$(dirname "$(ldd "$fakedir/libcuda.so.1" | awk '/libc\.so/ {print $3}')")
	mkdir -p "$r"/{bin,usr/bin,tmp,proc,dev,sys,etc,out,run} "$r$libdir" || return 1
	# (chmod, dd and id: check-podman's rundir scenario tries what a container may leave.)
	cp "$(command -v sh)" "$(command -v sleep)" "$(command -v cat)" "$(command -v chmod)" \
		"$(command -v dd)" "$(command -v id)" "$r/bin/" || return 1
	for prog; do
		cp "${prog%=*}" "$r/usr/bin/${prog##*=}" || return 1
	done
	cp "$fakedir/libcuda.so.1" "$r$libdir/" || return 1
	for f in "$r"/bin/* "$r"/usr/bin/* "$fakedir/libcuda.so.1" "$shim"; do
		ldd "$f" | awk '/=>/ {print $3} /^[[:space:]]*\/.*ld-linux/ {print $1}'
	done | sort -u | while read -r lib; do
		[ -f "$lib" ] && cp -L --parents "$lib" "$r/"
	done
	tar -C "$r" -cf "$tar" .
}
