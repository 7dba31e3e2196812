package helmcheck

import (
	"fmt"

	"go.starlark.net/resolve"
	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// TiltBuiltins returns the global names Tilt predeclares for a Tiltfile (docs.tilt.dev/api.html).
func TiltBuiltins() []string {
	return []string{
		"allow_k8s_contexts", "analytics_settings", "blob", "ci_settings", "custom_build", "dc_resource",
		"decode_json", "decode_yaml", "decode_yaml_stream", "default_registry", "disable_snapshots",
		"docker_build", "docker_compose", "docker_prune_settings", "enable_feature", "encode_json",
		"encode_yaml", "encode_yaml_stream", "exec_action", "exit", "fail", "fall_back_on", "filter_yaml",
		"helm", "http_get_action", "include", "k8s_context", "k8s_custom_deploy", "k8s_kind",
		"k8s_namespace", "k8s_resource", "k8s_yaml", "kustomize", "link", "listdir", "load_dynamic",
		"local", "local_resource", "port_forward", "probe", "read_file", "read_json", "read_yaml",
		"read_yaml_stream", "restart_container", "run", "secret_settings", "set_team", "struct", "sync",
		"tcp_socket_action", "trigger_mode", "update_settings", "version_settings", "warn", "watch_file",
		"watch_settings", "workload_to_resource_function", "initial_sync",
		"TRIGGER_MODE_AUTO", "TRIGGER_MODE_MANUAL",
		"os", "config", "shlex", "sys", "v1alpha1",
	}
}

// ParseTiltfile parses src (named filename in messages) as a Tiltfile and resolves every name
// against Starlark's universe plus predeclared. It returns the syntax tree, or an error listing
// syntax errors and undefined names.
func ParseTiltfile(filename string, src []byte, predeclared []string) (*syntax.File, error) {
	// Tilt runs Tiltfiles with these Starlark dialect options.
	opts := syntax.FileOptions{Set: true, While: true, TopLevelControl: true, GlobalReassign: true, Recursion: true}
	f, err := opts.Parse(filename, src, 0)
	if err != nil {
		return nil, fmt.Errorf("helmcheck: parse %s: %w", filename, err)
	}
	known := make(map[string]bool, len(predeclared))
	for _, name := range predeclared {
		known[name] = true
	}
	isPredeclared := func(name string) bool { return known[name] }
	isUniversal := func(name string) bool { _, ok := starlark.Universe[name]; return ok }
	if err := resolve.File(f, isPredeclared, isUniversal); err != nil {
		return nil, fmt.Errorf("helmcheck: resolve %s: %w", filename, err)
	}
	return f, nil
}

// Call is one call of a global function in a Tiltfile with its literal string arguments.
type Call struct {
	// Func is the called name, as "k8s_yaml".
	Func string
	// Args are the positional arguments that are string literals ("" for any other expression).
	Args []string
	// Kwargs are the keyword arguments that are string literals.
	Kwargs map[string]string
}

// Calls lists every call of a plain name in f, in source order.
func Calls(f *syntax.File) []Call {
	var calls []Call
	syntax.Walk(f, func(n syntax.Node) bool {
		call, ok := n.(*syntax.CallExpr)
		if !ok {
			return true
		}
		fn, ok := call.Fn.(*syntax.Ident)
		if !ok {
			return true
		}
		c := Call{Func: fn.Name, Kwargs: map[string]string{}}
		for _, arg := range call.Args {
			if bin, ok := arg.(*syntax.BinaryExpr); ok && bin.Op == syntax.EQ {
				if key, ok := bin.X.(*syntax.Ident); ok {
					c.Kwargs[key.Name] = literal(bin.Y)
				}
				continue
			}
			c.Args = append(c.Args, literal(arg))
		}
		calls = append(calls, c)
		return true
	})
	return calls
}

func literal(e syntax.Expr) string {
	if lit, ok := e.(*syntax.Literal); ok && lit.Token == syntax.STRING {
		if s, ok := lit.Value.(string); ok {
			return s
		}
	}
	return ""
}
