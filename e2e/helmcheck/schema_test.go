package helmcheck_test

import (
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/e2e/helmcheck"
)

// schemaValidator returns a validator over the schemas `make helm-check` points K8S_OPENAPI_DIR at.
func schemaValidator() *helmcheck.SchemaValidator {
	GinkgoHelper()
	dir := os.Getenv("K8S_OPENAPI_DIR")
	Expect(dir).NotTo(BeEmpty(), "K8S_OPENAPI_DIR names the api/openapi-spec/v3 directory of k8s.io/kubernetes: run `make helm-check`")
	v, err := helmcheck.NewSchemaValidator(dir)
	Expect(err).NotTo(HaveOccurred())
	return v
}

var _ = Describe("validation against Kubernetes' OpenAPI schemas", func() {
	var v *helmcheck.SchemaValidator

	BeforeEach(func() {
		v = schemaValidator()
	})

	It("validates every manifest of the default and production renders with no error", func() {
		dir, err := filepath.Abs(env("RENDERED_DIR", "../../.state/rendered"))
		Expect(err).NotTo(HaveOccurred())
		total := 0
		for _, file := range []string{defaultFile, productionFile, "dev-infra.yaml"} {
			n, err := v.ValidateFile(filepath.Join(dir, file))
			Expect(err).NotTo(HaveOccurred(), file)
			Expect(n).To(BeNumerically(">", 0), file)
			GinkgoWriter.Printf("%s: %d manifests valid\n", file, n)
			total += n
		}
		AddReportEntry("manifests validated against the Kubernetes schemas", total)
	})

	It("accepts a valid Deployment", func() {
		Expect(v.Validate([]byte(validDeployment))).To(Succeed())
	})

	It("rejects an unknown field", func() {
		err := v.Validate([]byte(validDeployment + "  replica: 3\n"))
		Expect(err).To(MatchError(ContainSubstring(`"replica"`)))
	})

	It("rejects an unknown field deep inside a pod template", func() {
		doc := strings.Replace(validDeployment, "image: web:1", "image: web:1\n          imagePullPolicie: Always", 1)
		Expect(doc).NotTo(Equal(validDeployment))
		Expect(v.Validate([]byte(doc))).To(MatchError(ContainSubstring(`"imagePullPolicie"`)))
	})

	It("rejects a value of the wrong type", func() {
		err := v.Validate([]byte(strings.Replace(validDeployment, "replicas: 2", "replicas: two", 1)))
		Expect(err).To(MatchError(ContainSubstring("replicas")))
	})

	It("rejects a missing required field", func() {
		doc := strings.Replace(validDeployment, "- name: web\n          image: web:1", "- image: web:1", 1)
		Expect(doc).NotTo(Equal(validDeployment))
		Expect(v.Validate([]byte(doc))).To(MatchError(ContainSubstring(`"name"`)))
		err := v.Validate([]byte("apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  ports:\n    - name: http\n"))
		Expect(err).To(MatchError(ContainSubstring(`"port"`)))
	})

	It("rejects a kind the Kubernetes release does not serve", func() {
		err := v.Validate([]byte("apiVersion: autoscaling/v2beta1\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: x\n"))
		Expect(err).To(MatchError(ContainSubstring("no such kind")))
	})

	It("names the file and document of a broken manifest and counts the valid ones", func() {
		dir := GinkgoT().TempDir()
		doc := validDeployment + "---\n# Source: a comment only\n---\n" + validDeployment + "  replica: 3\n"
		path := filepath.Join(dir, "bad.yaml")
		Expect(os.WriteFile(path, []byte(doc), 0o600)).To(Succeed())
		n, err := v.ValidateFile(path)
		Expect(err).To(MatchError(ContainSubstring("bad.yaml#2")))
		Expect(n).To(Equal(1))
	})
})
