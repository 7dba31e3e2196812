#!/usr/bin/env bash
# check-imports.sh enforces the module boundaries of the workspace and the layering of
# docs/architecture.md ("The layering rule", ADR 0135). Usage: check-imports.sh [TREE], TREE
# being a workspace laid out like this repository (default: this repository).
#
# Module boundaries: a service never imports another service's module, and pkg/, proto-events/
# and e2e/ import no service at all (tests included).
#
# Layering, known by where a package lives under services/<svc>/internal/:
#   app, config                     wiring: import anything;
#   store, httpapi, bus, cache,     adapters: each of these folders, and each outbound/<name>,
#   outbound/<name>                 is one adapter; an adapter imports its own packages, the
#                                   domain, pkg/ and libraries, never another adapter or app;
#   any other <noun>                domain: the standard library without its network, database
#                                   and process clients (STD_IO), the pkg/ packages in
#                                   DOMAIN_PKG, the pure helpers in PURE and other domain packages.
# Production imports are checked (tests may import anything inside their service), and no
# interface declared outside store names a gorm type (e2e/cmd/gormiface).
# It prints every offending import or interface and exits 1 when there is one.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TREE="$(cd "${1:-$REPO}" && pwd)"
ROOT=github.com/motionstudio/platform
cd "$TREE"

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

# DOMAIN_PKG are the pkg/ packages a domain may import: errors, paging, the email rule, the
# lease a job worker holds, the interval loop, sealing, and the platform's token claims and
# signer (identity's token issues them).
DOMAIN_PKG="apperr check paging email jobs service crypt authn"
# PURE lists the import path prefixes of third-party helpers without I/O a domain may use (the
# YAML decoder parses skill documents in internal/library; argon2 hashes passwords; jwx encodes
# signing keys).
PURE="github.com/google/uuid golang.org/x/image/ go.yaml.in/yaml/v3 golang.org/x/crypto/argon2 github.com/lestrrat-go/jwx/"
# STD_IO are standard-library clients of networks, databases and processes: adapters' business.
STD_IO="net/http net/smtp net/rpc database/sql os/exec"

prod="$(go list -e -f '{{.ImportPath}}{{range .Imports}} {{.}}{{end}}' "$ROOT/services/..." | grep '/internal/' || true)"
awk -v root="$ROOT" -v domainpkg="$DOMAIN_PKG" -v purestr="$PURE" -v stdio="$STD_IO" '
	BEGIN {
		n = split(domainpkg, d, " "); for (i = 1; i <= n; i++) dpkg[root "/pkg/" d[i]] = 1
		np = split(purestr, purelist, " ")
		n = split(stdio, s, " "); for (i = 1; i <= n; i++) io[s[i]] = 1
	}
	# layer prints what an internal package of a service is: "<svc> wiring", "<svc> domain" or
	# "<svc> adapter <name>" (store, httpapi, bus, cache or outbound/<x>); "" outside internal/.
	function layer(p,    rest, parts) {
		if (index(p, root "/services/") != 1) return ""
		rest = substr(p, length(root "/services/") + 1)
		split(rest, parts, "/")
		if (parts[2] != "internal" || parts[3] == "") return ""
		if (parts[3] == "app" || parts[3] == "config") return parts[1] " wiring"
		if (parts[3] == "store" || parts[3] == "httpapi" || parts[3] == "bus" || parts[3] == "cache") return parts[1] " adapter " parts[3]
		if (parts[3] == "outbound") return parts[1] " adapter outbound/" parts[4]
		return parts[1] " domain"
	}
	function ispure(to,    i) {
		for (i = 1; i <= np; i++) if (index(to, purelist[i]) == 1) return 1
		return 0
	}
	function std(to) { return index(to, ".") == 0 && index(to, root "/") != 1 }
	{
		from = layer($1)
		if (from == "" || from ~ / wiring$/) next
		split(from, f, " ")
		for (i = 2; i <= NF; i++) {
			to = layer($i)
			split(to, t, " ")
			if (f[2] == "domain") {
				if ($i in io) why = "a network, database or process client"
				else if (std($i) || ($i in dpkg) || ispure($i) || to == f[1] " domain") continue
				else if (t[2] == "adapter") why = "the " t[3] " adapter"
				else if (t[2] == "wiring") why = "the wiring"
				else why = "neither the standard library, DOMAIN_PKG, PURE nor the domain"
				printf "check-imports: domain package %s imports %s (%s)\n", $1, $i, why
				bad = 1
			} else if (t[2] == "wiring" || (t[2] == "adapter" && to != from)) {
				printf "check-imports: adapter %s (%s) imports %s (%s): adapters meet only in app\n", $1, f[3], $i, t[2] == "wiring" ? "the wiring" : "the " t[3] " adapter"
				bad = 1
			}
		}
	}
	END { exit bad }
' <<<"$prod" || { echo "check-imports: layering violated (docs/architecture.md, The layering rule)" >&2; exit 1; }

go run -C "$REPO" ./e2e/cmd/gormiface "$TREE" || { echo "check-imports: gorm types outside store (docs/architecture.md, The layering rule)" >&2; exit 1; }
echo "check-imports: $(wc -l <<<"$listing") packages respect the module boundaries and the layering"
