# Sourced by scripts/build-trace-processor*.sh.
#
# git_extract GIT REV DEST: a work tree of REV from the repository GIT
# (bare or not) in DEST, made afresh. A mirror may lack large blobs a
# build does not use (Perfetto's amalgamated SDK and test data,
# protobuf's compatibility jars): those files are left out.
git_extract() {
	local git=$1 rev=$2 dest=$3 index

	rm -rf "$dest"
	mkdir -p "$dest"
	index=$(mktemp)
	(
		if [ -d "$git/.git" ]; then git=$git/.git; fi
		export GIT_DIR=$git GIT_INDEX_FILE=$index
		git read-tree "$rev"
		git ls-files -s | awk '{ print $2 }' | git cat-file --batch-check |
			awk '$2 == "missing" { print $1 }' >"$index.missing"
		if [ -s "$index.missing" ]; then
			git ls-files -s | grep -F -f "$index.missing" | cut -f2 |
				xargs git update-index --force-remove
		fi
		git checkout-index -a --prefix="$dest/"
	)
	rm -f "$index" "$index.missing"
}
