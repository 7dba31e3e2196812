package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

const shop = "github.com/motionstudio/platform/services/shop-svc/internal/"

// repo returns the repository root.
func repo() string {
	dir, err := filepath.Abs("../../..")
	Expect(err).NotTo(HaveOccurred())
	return dir
}

// copyTree copies testdata/tree, a workspace whose shop-svc keeps the layers, to a temporary
// directory and returns it.
func copyTree() string {
	dst := GinkgoT().TempDir()
	Expect(os.CopyFS(dst, os.DirFS("testdata/tree"))).To(Succeed())
	return dst
}

// checkImports runs scripts/check-imports.sh on tree and returns its exit code and output.
func checkImports(tree string) (int, string) {
	cmd := exec.Command("bash", filepath.Join(repo(), "scripts", "check-imports.sh"), tree) // #nosec G204 -- the repository's own script
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GOWORK=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), string(out)
	}
	Expect(err).NotTo(HaveOccurred())
	return 0, string(out)
}

func write(tree, path, src string) {
	Expect(os.WriteFile(filepath.Join(tree, "services/shop-svc/internal", path), []byte(src), 0o600)).To(Succeed())
}

var _ = Describe("scripts/check-imports.sh", func() {
	It("passes a service whose wiring imports everything, adapters only the domain and their own sub-packages, and store names gorm", func() {
		code, out := checkImports(copyTree())
		Expect(out).To(ContainSubstring("check-imports: 8 packages respect the module boundaries and the layering"))
		Expect(code).To(Equal(0))
	})

	DescribeTable("fails with one line naming what is wrong",
		func(path, src, line string) {
			tree := copyTree()
			write(tree, path, src)
			code, out := checkImports(tree)
			Expect(code).To(Equal(1))
			Expect(out).To(ContainSubstring(line))
		},
		Entry("a domain package importing the store", "order/leak.go",
			"package order\n\nimport \"github.com/motionstudio/platform/services/shop-svc/internal/store\"\n\nvar _ = store.Orders{}\n",
			"check-imports: domain package "+shop+"order imports "+shop+"store (the store adapter)"),
		Entry("a domain package importing an HTTP client", "order/leak.go",
			"package order\n\nimport \"net/http\"\n\nvar _ = http.MethodGet\n",
			"check-imports: domain package "+shop+"order imports net/http (a network, database or process client)"),
		Entry("a domain package importing the wiring", "order/leak.go",
			"package order\n\nimport \"github.com/motionstudio/platform/services/shop-svc/internal/app\"\n\nvar _ = app.App{}\n",
			"check-imports: domain package "+shop+"order imports "+shop+"app (the wiring)"),
		Entry("an HTTP handler package importing the store", "httpapi/orderapi/leak.go",
			"package orderapi\n\nimport \"github.com/motionstudio/platform/services/shop-svc/internal/store\"\n\nvar _ = store.Orders{}\n",
			"check-imports: adapter "+shop+"httpapi/orderapi (httpapi) imports "+shop+"store (the store adapter): adapters meet only in app"),
		Entry("an outbound client importing another", "outbound/mailer/leak.go",
			"package mailer\n\nimport \"github.com/motionstudio/platform/services/shop-svc/internal/outbound/texter\"\n\nvar _ = texter.Texter{}\n",
			"check-imports: adapter "+shop+"outbound/mailer (outbound/mailer) imports "+shop+"outbound/texter (the outbound/texter adapter): adapters meet only in app"),
		Entry("an adapter importing the wiring", "bus/leak.go",
			"package bus\n\nimport \"github.com/motionstudio/platform/services/shop-svc/internal/app\"\n\nvar _ = app.App{}\n",
			"check-imports: adapter "+shop+"bus (bus) imports "+shop+"app (the wiring): adapters meet only in app"),
		Entry("a *gorm.DB in a bus interface", "bus/leak.go",
			"package bus\n\nimport \"gorm.io/gorm\"\n\n// Tx is a transaction.\ntype Tx interface {\n\tEnqueue(tx *gorm.DB) error\n}\n",
			"services/shop-svc/internal/bus/leak.go:7:14: interface Tx names gorm.DB: only internal/store may name gorm types"),
		Entry("a gorm type behind an alias in a bus function type", "bus/leak.go",
			"package bus\n\nimport \"gorm.io/gorm\"\n\n// DB is gorm's.\ntype DB = *gorm.DB\n\n// Record records in a transaction.\ntype Record func(db DB) error\n",
			"services/shop-svc/internal/bus/leak.go:9:21: function type Record names DB, defined as a gorm type: only internal/store may name gorm types"),
	)

	It("finds no gorm type in an interface of the platform's services outside store", func() {
		Expect(check(repo())).To(BeEmpty())
	})
})
