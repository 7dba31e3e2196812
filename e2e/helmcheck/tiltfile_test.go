package helmcheck_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// tiltfileResult is the part of `tilt alpha tiltfile-result`'s JSON (Tilt's TiltfileLoadResult)
// the specs read.
type tiltfileResult struct {
	Manifests []struct {
		Name         string
		Labels       map[string]string
		ImageTargets []struct {
			Selector       string `json:"selector"`
			LiveUpdateSpec struct {
				Syncs []struct {
					LocalPath     string `json:"localPath"`
					ContainerPath string `json:"containerPath"`
				} `json:"syncs"`
				Execs []struct {
					Args         []string `json:"args"`
					TriggerPaths []string `json:"triggerPaths"`
				} `json:"execs"`
			}
			BuildDetails struct {
				DockerfileContents string   `json:"dockerfileContents"`
				Context            string   `json:"context"`
				Args               []string `json:"args"`
			}
		}
		DeployTarget struct {
			YAML                    string `json:"yaml"`
			PortForwardTemplateSpec *struct {
				Forwards []struct {
					LocalPort     int32 `json:"localPort"`
					ContainerPort int32 `json:"containerPort"`
				} `json:"forwards"`
			} `json:"portForwardTemplateSpec"`
			UpdateCmdSpec *struct {
				Args []string `json:"args"`
			}
		}
		ResourceDependencies []string
	}
	ConfigFiles []string
}

var _ = Describe("the Tiltfile, as Tilt evaluates it", func() {
	var result tiltfileResult

	BeforeEach(func() {
		path := os.Getenv("TILTFILE_RESULT")
		Expect(path).NotTo(BeEmpty(), "TILTFILE_RESULT names the output of `tilt alpha tiltfile-result`: run `make helm-check`")
		raw, err := os.ReadFile(path)
		Expect(err).NotTo(HaveOccurred())
		result = tiltfileResult{}
		Expect(json.Unmarshal(raw, &result)).To(Succeed())
	})

	It("declares the infrastructure, a compile step and a deployed service per service", func() {
		var names []string
		for _, m := range result.Manifests {
			names = append(names, m.Name)
		}
		Expect(names).To(ConsistOf(
			"postgres", "redis", "nats", "minio", "minio-buckets",
			"compile-identity", "compile-content", "compile-agentteam",
			"motionstudio-identity", "motionstudio-content", "motionstudio-agentteam",
			// The chart's objects that belong to no workload (ConfigMaps, Secrets, ServiceAccounts).
			"uncategorized",
		))
	})

	It("builds each service's dev image from its compiled binary and live-updates it with a restart", func() {
		services := map[string]int32{"identity": 8081, "content": 8082, "agentteam": 8083}
		for name, port := range services {
			binary := name + "-svc"
			var found bool
			for _, m := range result.Manifests {
				if m.Name != "motionstudio-"+name {
					continue
				}
				found = true
				Expect(m.ResourceDependencies).To(ContainElements("compile-"+name, "postgres", "redis", "nats", "minio-buckets"), m.Name)
				Expect(m.DeployTarget.YAML).To(ContainSubstring("image: motionstudio/"+binary), m.Name)
				Expect(m.DeployTarget.YAML).To(ContainSubstring("imagePullPolicy: IfNotPresent"), m.Name)
				Expect(m.DeployTarget.YAML).To(ContainSubstring("readOnlyRootFilesystem: false"), m.Name)
				Expect(m.DeployTarget.PortForwardTemplateSpec).NotTo(BeNil(), m.Name)
				Expect(m.DeployTarget.PortForwardTemplateSpec.Forwards).To(ContainElement(
					And(HaveField("LocalPort", port), HaveField("ContainerPort", port))), m.Name)

				Expect(m.ImageTargets).To(HaveLen(1), m.Name)
				image := m.ImageTargets[0]
				Expect(image.Selector).To(Equal("motionstudio/"+binary), m.Name)
				Expect(image.BuildDetails.Context).To(HaveSuffix(filepath.Join(".state", "tilt")), m.Name)
				Expect(image.BuildDetails.Args).To(ContainElement("BINARY="+binary), m.Name)
				Expect(image.BuildDetails.DockerfileContents).To(ContainSubstring(`ENTRYPOINT ["/app/restart.sh", "/app/service"]`), m.Name)
				Expect(image.BuildDetails.DockerfileContents).To(ContainSubstring("/app/run"), m.Name)

				live := image.LiveUpdateSpec
				Expect(live.Syncs).To(HaveLen(1), m.Name)
				Expect(live.Syncs[0].LocalPath).To(HaveSuffix(filepath.Join(".state", "tilt", binary)), m.Name)
				Expect(live.Syncs[0].ContainerPath).To(Equal("/app/"+binary), m.Name)
				Expect(live.Execs).To(HaveLen(1), m.Name)
				Expect(strings.Join(live.Execs[0].Args, " ")).To(ContainSubstring("> /app/run/restart"), m.Name)
				Expect(live.Execs[0].TriggerPaths).To(ConsistOf(HaveSuffix(binary)), m.Name)
			}
			Expect(found).To(BeTrue(), "no resource motionstudio-%s", name)
		}
	})

	It("compiles each service on the host with restart.sh next to the binary", func() {
		for _, name := range []string{"identity", "content", "agentteam"} {
			var found bool
			for _, m := range result.Manifests {
				if m.Name != "compile-"+name {
					continue
				}
				found = true
				Expect(m.DeployTarget.UpdateCmdSpec).NotTo(BeNil(), m.Name)
				cmd := strings.Join(m.DeployTarget.UpdateCmdSpec.Args, " ")
				Expect(cmd).To(ContainSubstring("cp deploy/tilt/restart.sh .state/tilt/"), m.Name)
				Expect(cmd).To(ContainSubstring("-o .state/tilt/"+name+"-svc ./services/"+name+"-svc/cmd/"+name+"-svc"), m.Name)
			}
			Expect(found).To(BeTrue(), "no resource compile-%s", name)
		}
	})

	It("loads no extension, so it needs no network", func() {
		for _, file := range result.ConfigFiles {
			Expect(file).NotTo(ContainSubstring("tilt_modules"), "Tilt loaded an extension")
		}
		src, err := os.ReadFile(filepath.Join("..", "..", "Tiltfile"))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(src)).NotTo(MatchRegexp(`load\(\s*["']ext://`))
	})
})
