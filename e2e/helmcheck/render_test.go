package helmcheck_test

import (
	"os/exec"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// helmTemplate renders the chart with extra helm arguments and returns stdout, stderr and the error.
func helmTemplate(args ...string) (string, string, error) {
	chart, err := filepath.Abs(env("CHART_DIR", "../../helm/motionstudio"))
	Expect(err).NotTo(HaveOccurred())
	cmd := exec.Command(env("HELM", "helm"), append([]string{"template", "motionstudio", chart}, args...)...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	return stdout.String(), stderr.String(), err
}

var _ = Describe("rendering the chart again", func() {
	production := func() string {
		path, err := filepath.Abs(env("CHART_DIR", "../../helm/motionstudio") + "/values-production.yaml")
		Expect(err).NotTo(HaveOccurred())
		return path
	}

	It("gives identical manifests, keys included, so re-renders never invalidate tokens", func() {
		first, stderr, err := helmTemplate()
		Expect(err).NotTo(HaveOccurred(), stderr)
		second, stderr, err := helmTemplate()
		Expect(err).NotTo(HaveOccurred(), stderr)
		Expect(first).To(ContainSubstring("SIGNING_KEY"))
		Expect(second).To(Equal(first))
	})

	It("gives identical production manifests", func() {
		first, stderr, err := helmTemplate("-f", production())
		Expect(err).NotTo(HaveOccurred(), stderr)
		second, _, err := helmTemplate("-f", production())
		Expect(err).NotTo(HaveOccurred())
		Expect(second).To(Equal(first))
	})

	It("derives different development keys for another release namespace", func() {
		first, _, err := helmTemplate()
		Expect(err).NotTo(HaveOccurred())
		other, _, err := helmTemplate("--namespace", "elsewhere")
		Expect(err).NotTo(HaveOccurred())
		Expect(other).NotTo(Equal(first))
	})

	It("refuses a production install whose enabled service names no existingSecret", func() {
		_, stderr, err := helmTemplate("-f", production(), "--set", "services.content.existingSecret=")
		Expect(err).To(HaveOccurred())
		Expect(stderr).To(ContainSubstring("/services/content/existingSecret"))
	})

	It("refuses a production install without a public base URL for content files", func() {
		_, stderr, err := helmTemplate("-f", production(), "--set", "config.s3PublicBaseURL=")
		Expect(err).To(HaveOccurred())
		Expect(stderr).To(ContainSubstring("s3PublicBaseURL"))
	})

	It("lets production disable a service without naming its Secret", func() {
		_, stderr, err := helmTemplate("-f", production(),
			"--set", "services.content.enabled=false", "--set", "services.content.existingSecret=")
		Expect(err).NotTo(HaveOccurred(), stderr)
	})
})
