// Package clientgen_test checks that a caller can generate a Go client from each service's
// OpenAPI document with oapi-codegen's default types and client output and build it: a schema
// named like a generated response wrapper (RegisterResponse for operationId register) makes
// that client fail to compile.
package clientgen_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

const runtimeModule = "github.com/oapi-codegen/runtime"

// run runs name with args in dir and returns its combined output; the spec fails when it exits
// non-zero.
func run(dir string, env []string, name string, args ...string) string {
	GinkgoHelper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "%s %s:\n%s", name, strings.Join(args, " "), out)
	return string(out)
}

var _ = Describe("a client generated from a service's OpenAPI document", func() {
	DescribeTable("compiles with oapi-codegen's default types and client output",
		func(service string) {
			generator, err := filepath.Abs(os.Getenv("OAPI_CODEGEN"))
			if os.Getenv("OAPI_CODEGEN") == "" {
				generator, err = filepath.Abs("../../.bin/oapi-codegen")
			}
			Expect(err).NotTo(HaveOccurred())
			svcDir, err := filepath.Abs(filepath.Join("../../services", service))
			Expect(err).NotTo(HaveOccurred())
			version := strings.TrimSpace(run(svcDir, nil, "go", "list", "-m", "-f", "{{.Version}}", runtimeModule))

			dir := GinkgoT().TempDir()
			code := run(dir, nil, generator, "-generate", "types,client", "-package", "client", filepath.Join(svcDir, "api", "openapi.yaml"))
			Expect(os.WriteFile(filepath.Join(dir, "client.go"), []byte(code), 0o600)).To(Succeed())
			mod := "module example.test/client\n\ngo 1.26\n\nrequire " + runtimeModule + " " + version + "\n"
			Expect(os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o600)).To(Succeed())

			standalone := []string{"GOWORK=off", "GOFLAGS=-mod=mod"}
			run(dir, standalone, "go", "mod", "tidy")
			run(dir, standalone, "go", "build", "./...")
		},
		Entry("identity-svc", "identity-svc"),
		Entry("content-svc", "content-svc"),
		Entry("agentteam-svc", "agentteam-svc"),
	)
})
