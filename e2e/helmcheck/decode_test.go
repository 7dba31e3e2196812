package helmcheck_test

import (
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"

	"github.com/motionstudio/platform/e2e/helmcheck"
)

const validDeployment = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: web
          image: web:1
          ports:
            - name: http
              containerPort: 8080
`

var _ = Describe("the strict decoder", func() {
	It("decodes a valid Deployment into its typed value", func() {
		value, err := helmcheck.Decode([]byte(validDeployment))
		Expect(err).NotTo(HaveOccurred())
		deployment, ok := value.(*appsv1.Deployment)
		Expect(ok).To(BeTrue(), "decoded %T", value)
		Expect(*deployment.Spec.Replicas).To(BeEquivalentTo(2))
		Expect(deployment.Spec.Template.Spec.Containers[0].Ports[0].ContainerPort).To(BeEquivalentTo(8080))
	})

	It("rejects an object with an unknown field", func() {
		doc := validDeployment + "  replica: 3\n"
		_, err := helmcheck.Decode([]byte(doc))
		Expect(err).To(MatchError(ContainSubstring(`unknown field "replica"`)))
	})

	It("rejects a field whose case differs from the API's", func() {
		doc := validDeployment + "  RevisionHistoryLimit: 3\n"
		_, err := helmcheck.Decode([]byte(doc))
		Expect(err).To(MatchError(ContainSubstring("RevisionHistoryLimit")))
	})

	It("rejects a value of the wrong type", func() {
		doc := `
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  ports:
    - name: http
      port: "http"
`
		_, err := helmcheck.Decode([]byte(doc))
		Expect(err).To(MatchError(ContainSubstring("cannot unmarshal string")))
	})

	It("rejects duplicate keys", func() {
		doc := validDeployment + "  replicas: 3\n"
		_, err := helmcheck.Decode([]byte(doc))
		Expect(err).To(MatchError(ContainSubstring("replicas")))
	})

	It("rejects a kind the platform does not deploy", func() {
		doc := "apiVersion: example.com/v1\nkind: Frobnicator\nmetadata:\n  name: x\n"
		_, err := helmcheck.Decode([]byte(doc))
		Expect(err).To(MatchError(ContainSubstring(`unknown kind "Frobnicator"`)))
	})

	It("rejects a document without apiVersion and kind", func() {
		_, err := helmcheck.Decode([]byte("metadata:\n  name: x\n"))
		Expect(err).To(MatchError(ContainSubstring("no apiVersion or kind")))
	})

	It("skips documents that hold only comments", func() {
		value, err := helmcheck.Decode([]byte("# Source: motionstudio/templates/hpa.yaml\n"))
		Expect(err).NotTo(HaveOccurred())
		Expect(value).To(BeNil())
	})

	It("names the file and document that failed", func() {
		dir := GinkgoT().TempDir()
		doc := validDeployment + "---\n" + validDeployment + "  replica: 3\n"
		Expect(os.WriteFile(filepath.Join(dir, "bad.yaml"), []byte(doc), 0o600)).To(Succeed())
		_, err := helmcheck.LoadDir(dir)
		Expect(err).To(MatchError(ContainSubstring("bad.yaml#1")))
	})

	It("fails on a directory without rendered manifests instead of passing", func() {
		_, err := helmcheck.LoadDir(GinkgoT().TempDir())
		Expect(err).To(MatchError(ContainSubstring("no *.yaml files")))
		_, err = helmcheck.LoadDir(filepath.Join(GinkgoT().TempDir(), "missing"))
		Expect(err).To(HaveOccurred())
	})

	It("fails on a rendered file that holds no object", func() {
		dir := GinkgoT().TempDir()
		Expect(os.WriteFile(filepath.Join(dir, "empty.yaml"), []byte("---\n# nothing\n"), 0o600)).To(Succeed())
		_, err := helmcheck.LoadDir(dir)
		Expect(err).To(MatchError(ContainSubstring("holds no Kubernetes object")))
	})
})
