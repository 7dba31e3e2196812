#!/usr/bin/env bash
# fuzz.sh runs every Go fuzz target of the workspace (each `func FuzzX(f *testing.F)` in a
# _test.go file under pkg, proto-events, services and e2e) for FUZZTIME each, one after another,
# from its module's directory, with FUZZ_WORKERS workers. A failing input is written by go test
# to the package's testdata/fuzz/FuzzX, where it stays as a seed that `go test` runs from then
# on. It prints each target's time and exits 1 when any target failed.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
FUZZTIME="${FUZZTIME:-1m}"
FUZZ_WORKERS="${FUZZ_WORKERS:-1}"
cd "$REPO"

# module_dir prints the directory of the go.mod that owns the directory $1.
module_dir() {
	local d="$1"
	until [[ -f "$d/go.mod" ]]; do
		[[ "$d" != "." ]] || { echo "fuzz: no go.mod above $1" >&2; return 1; }
		d="$(dirname "$d")"
	done
	echo "$d"
}

mapfile -t targets < <(grep -rE --include='*_test.go' -o '^func Fuzz[A-Za-z0-9_]*\(' pkg proto-events services e2e |
	sed -E 's/:func (Fuzz[A-Za-z0-9_]*)\($/ \1/' | sort)
[[ ${#targets[@]} -gt 0 ]] || { echo "fuzz: no fuzz targets found" >&2; exit 1; }

failed=()
for t in "${targets[@]}"; do
	file="${t% *}" name="${t#* }"
	pkgdir="$(dirname "$file")"
	mod="$(module_dir "$pkgdir")"
	rel="./${pkgdir#"$mod"}"
	rel="${rel/#.\/\//./}"
	echo "== $name ($pkgdir, $FUZZTIME)"
	start=$SECONDS
	if ! (cd "$mod" && go test -run='^$' -fuzz="^${name}\$" -fuzztime="$FUZZTIME" -parallel="$FUZZ_WORKERS" "$rel"); then
		failed+=("$name ($pkgdir)")
	fi
	echo "-- $name took $((SECONDS - start))s"
done

if [[ ${#failed[@]} -gt 0 ]]; then
	printf 'fuzz: failed: %s\n' "${failed[@]}" >&2
	exit 1
fi
echo "fuzz: ${#targets[@]} targets passed"
