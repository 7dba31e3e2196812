package helmcheck_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	networkingv1 "k8s.io/api/networking/v1"

	"github.com/motionstudio/platform/e2e/helmcheck"
)

// helmTemplate renders the chart with extra helm arguments and returns stdout, stderr and the error.
func helmTemplate(args ...string) (string, string, error) {
	chart, err := filepath.Abs(env("CHART_DIR", "../../helm/motionstudio"))
	Expect(err).NotTo(HaveOccurred())
	// helm built with `go install` renders for Kubernetes 1.20 unless told otherwise; a later
	// --kube-version in args wins.
	base := []string{"template", "motionstudio", chart, "--kube-version", env("KUBE_VERSION", "1.30.14")}
	cmd := exec.Command(env("HELM", "helm"), append(base, args...)...)
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

	It("refuses a Kubernetes release without lifecycle.preStop.sleep", func() {
		_, stderr, err := helmTemplate("--kube-version", "1.29.9")
		Expect(err).To(HaveOccurred())
		Expect(stderr).To(ContainSubstring("kubeVersion"))
		_, stderr, err = helmTemplate("--kube-version", "1.30.0")
		Expect(err).NotTo(HaveOccurred(), stderr)
	})

	It("renders a ServiceMonitor per service instead of annotations where the Prometheus Operator runs", func() {
		const crd = "monitoring.coreos.com/v1/ServiceMonitor"
		out, stderr, err := helmTemplate("-f", production(), "--api-versions", crd)
		Expect(err).NotTo(HaveOccurred(), stderr)
		Expect(strings.Count(out, "\nkind: ServiceMonitor\n")).To(Equal(3))
		Expect(out).To(ContainSubstring("release: kube-prometheus-stack"))
		Expect(out).To(ContainSubstring("path: /metrics"))
		Expect(out).NotTo(ContainSubstring("prometheus.io/scrape"))

		out, stderr, err = helmTemplate("--api-versions", crd)
		Expect(err).NotTo(HaveOccurred(), stderr)
		Expect(out).NotTo(ContainSubstring("kind: ServiceMonitor"), "metrics are off by default")
	})

	It("admits no one, never everyone, to a service whose policy lists no ingress peer", func() {
		out, stderr, err := helmTemplate("--set", "networkPolicy.enabled=true", "--set-json", "networkPolicy.ingressFrom=[]")
		Expect(err).NotTo(HaveOccurred(), stderr)
		path := filepath.Join(GinkgoT().TempDir(), "policies.yaml")
		Expect(os.WriteFile(path, []byte(out), 0o600)).To(Succeed())
		objects, err := helmcheck.LoadFile(path)
		Expect(err).NotTo(HaveOccurred())
		seen := 0
		for _, o := range objects {
			np, ok := o.Value.(*networkingv1.NetworkPolicy)
			if !ok {
				continue
			}
			seen++
			if o.Labels["app.kubernetes.io/component"] == "identity" {
				Expect(np.Spec.Ingress).To(HaveLen(1), np.Name)
				Expect(np.Spec.Ingress[0].From).To(HaveLen(2), np.Name)
			} else {
				Expect(np.Spec.Ingress).To(BeEmpty(), np.Name)
				Expect(np.Spec.PolicyTypes).To(ContainElement(networkingv1.PolicyTypeIngress), np.Name)
			}
		}
		Expect(seen).To(Equal(3))
	})

	It("refuses an infrastructure entry without peers, which would reach every destination", func() {
		_, stderr, err := helmTemplate("--set", "networkPolicy.enabled=true", "--set-json", "networkPolicy.infrastructure.redis.to=[]")
		Expect(err).To(HaveOccurred())
		Expect(stderr).To(ContainSubstring("redis"))
	})
})
