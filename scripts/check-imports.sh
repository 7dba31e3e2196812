#!/usr/bin/env bash
# check-imports.sh enforces the module boundaries of the workspace: a service never imports
# another service's module, and pkg/, proto-events/ and e2e/ import no service at all
# (tests included). It prints every offending import and exits 1 when there is one.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ROOT=github.com/motionstudio/platform
cd "$REPO"

listing="$(go list -e -f '{{.ImportPath}}{{range .Imports}} {{.}}{{end}}{{range .TestImports}} {{.}}{{end}}{{range .XTestImports}} {{.}}{{end}}' "$ROOT/...")"
[[ -n "$listing" ]] || { echo "check-imports: go list found no packages under $ROOT/..." >&2; exit 1; }

awk -v root="$ROOT" '
	# owner prints the workspace module a package belongs to: "services/<name>", "pkg", ... or "".
	function owner(p,    rest, parts) {
		if (index(p, root "/") != 1) return ""
		rest = substr(p, length(root) + 2)
		split(rest, parts, "/")
		if (parts[1] == "services") return "services/" parts[2]
		return parts[1]
	}
	{
		from = owner($1)
		for (i = 2; i <= NF; i++) {
			to = owner($i)
			if (to ~ /^services\// && to != from) {
				printf "check-imports: %s (%s) imports %s (%s)\n", $1, from, $i, to
				bad = 1
			}
		}
	}
	END { exit bad }
' <<<"$listing" || { echo "check-imports: module boundaries violated" >&2; exit 1; }
echo "check-imports: $(wc -l <<<"$listing") packages respect the module boundaries"
