#!/usr/bin/env bash
# check-imports.sh enforces the module boundaries of the workspace: a service never imports
# another service's module, and pkg/, proto-events/ and e2e/ import no service at all
# (tests included). It also enforces the layering of docs/ARCHITECTURE: a service's domain
# packages (internal/<noun> that is not an adapter below) import only the standard library
# without its network and database clients, pkg/apperr, pkg/check (the input rules),
# pkg/paging, pkg/email (the one email rule), pkg/jobs (the lease a worker holds, without
# I/O), the pure helpers below and
# other domain packages of their service; adapters (store, httpapi, bus, outbound clients such
# as the payment gateways and the SMTP sender) are never imported by a domain package.
# It prints every offending import and exits 1 when there is one.
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

# ADAPTERS name adapter packages: a package under a service's internal/ with any of these path
# elements is an adapter (internal/embed/openaiembed is one, internal/embed is domain;
# internal/gitsource reads the shared skill source with go-git; mcpclient, its test server
# mcptest and modelclient call MCP servers and model endpoints).
ADAPTERS="app config store cache httpapi bus challenge session domaincheck gateway oauth password sender token previewai openaiembed gitsource mcpclient mcptest modelclient"
# PURE lists the import path prefixes of third-party helpers without I/O a domain may use (the
# YAML decoder parses skill documents in internal/library).
PURE="github.com/google/uuid golang.org/x/image/ go.yaml.in/yaml/v3"
# STD_IO are standard-library clients of networks, databases and processes: adapters' business.
STD_IO="net/http net/smtp net/rpc database/sql os/exec"

prod="$(go list -e -f '{{.ImportPath}}{{range .Imports}} {{.}}{{end}}' "$ROOT/services/..." | grep '/internal/' || true)"
awk -v root="$ROOT" -v adapters="$ADAPTERS" -v pure="$PURE" -v stdio="$STD_IO" '
	BEGIN {
		n = split(adapters, a, " "); for (i = 1; i <= n; i++) adapter[a[i]] = 1
		np = split(pure, purelist, " ")
		n = split(stdio, s, " "); for (i = 1; i <= n; i++) io[s[i]] = 1
	}
	# part prints "<service>/<path under internal/>" of an internal package, or "".
	function part(p,    rest, parts) {
		if (index(p, root "/services/") != 1) return ""
		rest = substr(p, length(root "/services/") + 1)
		split(rest, parts, "/")
		if (parts[2] != "internal") return ""
		return parts[1] "/" substr(rest, length(parts[1] "/internal/") + 1)
	}
	function isAdapter(pt,    parts, n, i) {
		n = split(pt, parts, "/")
		for (i = 2; i <= n; i++) if (parts[i] in adapter) return 1
		return 0
	}
	function allowed(from, to,    i, pt) {
		if (to in io) return 0
		if (index(to, ".") == 0 && index(to, root "/") != 1) return 1
		if (to == root "/pkg/apperr" || to == root "/pkg/check" || to == root "/pkg/paging" || to == root "/pkg/jobs" || to == root "/pkg/email") return 1
		for (i = 1; i <= np; i++) if (index(to, purelist[i]) == 1) return 1
		pt = part(to)
		if (pt == "") return 0
		split(from, f, "/"); split(pt, t, "/")
		return f[1] == t[1] && !isAdapter(pt)
	}
	{
		from = part($1)
		if (from == "" || isAdapter(from)) next
		for (i = 2; i <= NF; i++) {
			if (!allowed(from, $i)) {
				printf "check-imports: domain package %s imports %s\n", $1, $i
				bad = 1
			}
		}
	}
	END { exit bad }
' <<<"$prod" || { echo "check-imports: layering violated (domain packages import only the standard library, pkg/apperr, pkg/check, pkg/paging, pkg/email and pure helpers)" >&2; exit 1; }
echo "check-imports: $(wc -l <<<"$listing") packages respect the module boundaries and the layering"
