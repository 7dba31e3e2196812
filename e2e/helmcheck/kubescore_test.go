package helmcheck_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// finding is one line of kube-score's ci output: "[CRITICAL] Deployment/x: (path) summary".
var finding = regexp.MustCompile(`^\[(OK|SKIPPED|WARNING|CRITICAL)\] (.*)$`)

// kubeScore scores a rendered file, without the tests named in ignore, and returns its findings
// by grade.
func kubeScore(path string, ignore ...string) map[string][]string {
	GinkgoHelper()
	args := []string{"score", "--output-format", "ci"}
	for _, test := range ignore {
		args = append(args, "--ignore-test", test)
	}
	cmd := exec.Command(env("KUBE_SCORE", "kube-score"), append(args, path)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	// kube-score exits 1 when it finds a CRITICAL; the findings below say which.
	if exitErr, ok := err.(*exec.ExitError); !ok || exitErr.ExitCode() != 1 {
		Expect(err).NotTo(HaveOccurred(), stderr.String())
	}
	grades := map[string][]string{}
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		m := finding.FindStringSubmatch(line)
		Expect(m).NotTo(BeNil(), "unexpected kube-score output %q", line)
		grades[m[1]] = append(grades[m[1]], m[2])
	}
	return grades
}

var _ = Describe("kube-score", func() {
	It("finds nothing CRITICAL in the default and production renders", func() {
		dir, err := filepath.Abs(env("RENDERED_DIR", "../../.state/rendered"))
		Expect(err).NotTo(HaveOccurred())
		// The tests each render skips, and why, are in values.yaml's comments: the default
		// (development) values leave networkPolicy off.
		ignored := map[string][]string{defaultFile: {"pod-networkpolicy"}, productionFile: nil}
		for file, ignore := range ignored {
			grades := kubeScore(filepath.Join(dir, file), ignore...)
			Expect(grades["OK"]).NotTo(BeEmpty(), file)
			Expect(grades["CRITICAL"]).To(BeEmpty(), file)
			summary := fmt.Sprintf("OK %d, SKIPPED %d, WARNING %d, CRITICAL %d",
				len(grades["OK"]), len(grades["SKIPPED"]), len(grades["WARNING"]), len(grades["CRITICAL"]))
			GinkgoWriter.Printf("kube-score %s: %s\n", file, summary)
			for _, w := range grades["WARNING"] {
				GinkgoWriter.Printf("  WARNING %s\n", w)
			}
			AddReportEntry("kube-score "+file, summary)
		}
	})

	It("reports a CRITICAL finding on a Deployment without resources or probes", func() {
		path := filepath.Join(GinkgoT().TempDir(), "bare.yaml")
		Expect(os.WriteFile(path, []byte(validDeployment), 0o600)).To(Succeed())
		Expect(kubeScore(path)["CRITICAL"]).NotTo(BeEmpty())
	})
})
