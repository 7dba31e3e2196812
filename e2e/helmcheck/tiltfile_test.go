package helmcheck_test

import (
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/e2e/helmcheck"
)

var _ = Describe("the Tiltfile", func() {
	var (
		path string
		src  []byte
	)

	BeforeEach(func() {
		var err error
		path, err = filepath.Abs(env("TILTFILE", "../../Tiltfile"))
		Expect(err).NotTo(HaveOccurred())
		src, err = os.ReadFile(path)
		Expect(err).NotTo(HaveOccurred())
	})

	It("uses only names that Tilt and Starlark define", func() {
		_, err := helmcheck.ParseTiltfile(path, src, helmcheck.TiltBuiltins())
		Expect(err).NotTo(HaveOccurred())
	})

	It("deploys files that exist in the repository", func() {
		f, err := helmcheck.ParseTiltfile(path, src, helmcheck.TiltBuiltins())
		Expect(err).NotTo(HaveOccurred())
		root := filepath.Dir(path)
		checked := 0
		for _, call := range helmcheck.Calls(f) {
			var refs []string
			switch call.Func {
			case "k8s_yaml", "helm":
				refs = append(refs, call.Args[0])
			case "docker_build", "docker_build_with_restart":
				refs = append(refs, call.Kwargs["dockerfile"])
			}
			for _, ref := range refs {
				if ref == "" {
					continue
				}
				Expect(filepath.Join(root, ref)).To(BeAnExistingFile(), "%s(%q)", call.Func, ref)
				checked++
			}
		}
		Expect(checked).To(BeNumerically(">=", 3), "k8s_yaml, helm and a dockerfile are referenced")
	})

	It("fails when a builtin is misspelt", func() {
		broken := strings.Replace(string(src), "k8s_yaml(", "k8s_yml(", 1)
		Expect(broken).NotTo(Equal(string(src)))
		_, err := helmcheck.ParseTiltfile(path, []byte(broken), helmcheck.TiltBuiltins())
		Expect(err).To(MatchError(ContainSubstring("undefined: k8s_yml")))
	})

	It("fails on a syntax error", func() {
		_, err := helmcheck.ParseTiltfile(path, append(append([]byte{}, src...), "\nk8s_yaml(\n"...), helmcheck.TiltBuiltins())
		Expect(err).To(MatchError(ContainSubstring("parse")))
	})
})
