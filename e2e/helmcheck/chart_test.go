package helmcheck_test

import (
	"encoding/base64"
	"fmt"
	"maps"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/motionstudio/platform/e2e/helmcheck"
)

// The files `make helm-check` renders into RENDERED_DIR.
const (
	defaultFile    = "default.yaml"
	productionFile = "production.yaml"
)

// services maps each chart service key to its container port.
var services = map[string]int32{"identity": 8081, "content": 8082, "agentteam": 8083}

// typed returns the objects of type T in objects.
func typed[T any](objects []helmcheck.Object) []T {
	var out []T
	for _, o := range objects {
		if v, ok := o.Value.(T); ok {
			out = append(out, v)
		}
	}
	return out
}

// chartObjects keeps the objects the Helm chart rendered (dev infrastructure is rendered too).
func chartObjects(objects []helmcheck.Object) []helmcheck.Object {
	var out []helmcheck.Object
	for _, o := range objects {
		if o.Labels["app.kubernetes.io/managed-by"] == "Helm" {
			out = append(out, o)
		}
	}
	return out
}

func countKinds(objects []helmcheck.Object) map[string]int {
	counts := map[string]int{}
	for _, o := range objects {
		counts[o.Kind]++
	}
	return counts
}

func names[T interface{ GetName() string }](items []T) []string {
	out := make([]string, 0, len(items))
	for _, item := range items {
		out = append(out, item.GetName())
	}
	return out
}

var _ = Describe("the rendered Helm chart", func() {
	// files holds every rendered file; charts only those the chart rendered, with its objects.
	var files, charts map[string][]helmcheck.Object

	BeforeEach(func() {
		dir, err := filepath.Abs(env("RENDERED_DIR", "../../.state/rendered"))
		Expect(err).NotTo(HaveOccurred())
		files, err = helmcheck.LoadDir(dir)
		Expect(err).NotTo(HaveOccurred())
		Expect(files).To(HaveKey(defaultFile), "render the chart with `make helm-check`")
		Expect(files).To(HaveKey(productionFile), "render the chart with `make helm-check`")
		charts = map[string][]helmcheck.Object{}
		for file, objects := range files {
			if chart := chartObjects(objects); len(chart) > 0 {
				charts[file] = chart
			}
		}
		Expect(charts).To(HaveKey(defaultFile))
		Expect(charts).To(HaveKey(productionFile))
	})

	It("renders every workload piece for each service with default values", func() {
		Expect(countKinds(chartObjects(files[defaultFile]))).To(Equal(map[string]int{
			"Deployment": 3, "Service": 3, "ConfigMap": 3, "Secret": 3, "ServiceAccount": 3, "PodDisruptionBudget": 3,
		}))
	})

	It("autoscales production and leaves its secrets to the operator", func() {
		Expect(countKinds(chartObjects(files[productionFile]))).To(Equal(map[string]int{
			"Deployment": 3, "Service": 3, "ConfigMap": 3, "ServiceAccount": 3, "PodDisruptionBudget": 3, "HorizontalPodAutoscaler": 3,
			"NetworkPolicy": 3,
		}))
		for _, hpa := range typed[*autoscalingv2.HorizontalPodAutoscaler](files[productionFile]) {
			Expect(*hpa.Spec.MinReplicas).To(BeNumerically(">=", 3), hpa.Name)
		}
		for _, d := range typed[*appsv1.Deployment](files[productionFile]) {
			for _, ref := range d.Spec.Template.Spec.Containers[0].EnvFrom {
				if ref.SecretRef != nil {
					Expect(ref.SecretRef.Name).To(HaveSuffix("-secrets"), d.Name)
				}
			}
		}
	})

	It("probes every service on /healthz and /readyz through its named port", func() {
		for file, objects := range charts {
			for _, d := range typed[*appsv1.Deployment](objects) {
				where := fmt.Sprintf("%s %s", file, d.Name)
				Expect(d.Spec.Template.Spec.Containers).To(HaveLen(1), where)
				c := d.Spec.Template.Spec.Containers[0]
				Expect(c.LivenessProbe).NotTo(BeNil(), where)
				Expect(c.LivenessProbe.HTTPGet).NotTo(BeNil(), where)
				Expect(c.LivenessProbe.HTTPGet.Path).To(Equal("/healthz"), where)
				Expect(c.ReadinessProbe).NotTo(BeNil(), where)
				Expect(c.ReadinessProbe.HTTPGet).NotTo(BeNil(), where)
				Expect(c.ReadinessProbe.HTTPGet.Path).To(Equal("/readyz"), where)
				Expect(c.StartupProbe).NotTo(BeNil(), where)
				Expect(c.Ports).To(HaveLen(1), where)
				for _, probe := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe} {
					Expect(probe.HTTPGet.Port.String()).To(Equal(c.Ports[0].Name), where)
				}
			}
		}
	})

	It("lets every pod drain: a preStop sleep, then a grace period longer than the service's shutdown", func() {
		for file, objects := range charts {
			configMaps := map[string]*corev1.ConfigMap{}
			for _, cm := range typed[*corev1.ConfigMap](objects) {
				configMaps[cm.Name] = cm
			}
			for _, d := range typed[*appsv1.Deployment](objects) {
				where := fmt.Sprintf("%s %s", file, d.Name)
				pod := d.Spec.Template.Spec
				c := pod.Containers[0]
				Expect(c.Lifecycle).NotTo(BeNil(), where)
				Expect(c.Lifecycle.PreStop).NotTo(BeNil(), where)
				Expect(c.Lifecycle.PreStop.Exec).To(BeNil(), "%s: distroless images have no shell to exec", where)
				Expect(c.Lifecycle.PreStop.Sleep).NotTo(BeNil(), where)
				preStop := time.Duration(c.Lifecycle.PreStop.Sleep.Seconds) * time.Second
				Expect(preStop).To(BeNumerically(">", 0), where)

				env := map[string]string{}
				for _, ref := range c.EnvFrom {
					if ref.ConfigMapRef != nil {
						Expect(configMaps).To(HaveKey(ref.ConfigMapRef.Name), where)
						maps.Copy(env, configMaps[ref.ConfigMapRef.Name].Data)
					}
				}
				duration := func(name string) time.Duration {
					GinkgoHelper()
					Expect(env).To(HaveKey(name), where)
					v, err := time.ParseDuration(env[name])
					Expect(err).NotTo(HaveOccurred(), "%s %s", where, name)
					return v
				}
				delay, timeout, grace := duration("HTTP_SHUTDOWN_DELAY"), duration("HTTP_SHUTDOWN_TIMEOUT"), duration("NATS_SHUTDOWN_GRACE")
				Expect(delay).To(BeNumerically(">", 0), where)
				Expect(pod.TerminationGracePeriodSeconds).NotTo(BeNil(), where)
				period := time.Duration(*pod.TerminationGracePeriodSeconds) * time.Second
				Expect(period).To(BeNumerically(">", preStop+max(delay+timeout, grace)),
					"%s: terminationGracePeriodSeconds covers preStop %s + delay %s + timeout %s (consumer grace %s)",
					where, preStop, delay, timeout, grace)
			}
		}
	})

	It("runs every container as non-root with a locked-down security context", func() {
		for file, objects := range charts {
			for _, d := range typed[*appsv1.Deployment](objects) {
				pod := d.Spec.Template.Spec
				where := fmt.Sprintf("%s %s", file, d.Name)
				Expect(pod.SecurityContext).NotTo(BeNil(), where)
				Expect(pod.SecurityContext.RunAsNonRoot).To(HaveValue(BeTrue()), where)
				Expect(pod.SecurityContext.SeccompProfile).NotTo(BeNil(), where)
				Expect(pod.SecurityContext.SeccompProfile.Type).To(Equal(corev1.SeccompProfileTypeRuntimeDefault), where)
				Expect(pod.AutomountServiceAccountToken).To(HaveValue(BeFalse()), where)
				for _, c := range append(append([]corev1.Container{}, pod.InitContainers...), pod.Containers...) {
					sc := c.SecurityContext
					Expect(sc).NotTo(BeNil(), where, c.Name)
					Expect(sc.RunAsNonRoot).To(HaveValue(BeTrue()), where, c.Name)
					Expect(sc.AllowPrivilegeEscalation).To(HaveValue(BeFalse()), where, c.Name)
					Expect(sc.ReadOnlyRootFilesystem).To(HaveValue(BeTrue()), where, c.Name)
					Expect(sc.Capabilities).NotTo(BeNil(), where, c.Name)
					Expect(sc.Capabilities.Drop).To(ContainElement(corev1.Capability("ALL")), where, c.Name)
				}
			}
		}
	})

	It("gives every container CPU and memory requests and a memory limit", func() {
		for file, objects := range charts {
			for _, d := range typed[*appsv1.Deployment](objects) {
				pod := d.Spec.Template.Spec
				for _, c := range append(append([]corev1.Container{}, pod.InitContainers...), pod.Containers...) {
					where := fmt.Sprintf("%s %s %s", file, d.Name, c.Name)
					Expect(c.Resources.Requests).To(HaveKey(corev1.ResourceCPU), where)
					Expect(c.Resources.Requests).To(HaveKey(corev1.ResourceMemory), where)
					Expect(c.Resources.Limits).To(HaveKey(corev1.ResourceMemory), where)
				}
			}
		}
	})

	It("sets each service's GOMEMLIMIT to 85 % of its memory limit, leaving the runtime's own memory room under it", func() {
		for file, objects := range charts {
			for _, d := range typed[*appsv1.Deployment](objects) {
				c := d.Spec.Template.Spec.Containers[0]
				where := fmt.Sprintf("%s %s", file, d.Name)
				limit := c.Resources.Limits[corev1.ResourceMemory]
				want := fmt.Sprintf("%dMiB", limit.Value()>>20*85/100)
				Expect(c.Env).To(ContainElement(corev1.EnvVar{Name: "GOMEMLIMIT", Value: want}), where)
			}
		}
	})

	It("migrates before serving, with the same image and environment", func() {
		for file, objects := range charts {
			for _, d := range typed[*appsv1.Deployment](objects) {
				pod := d.Spec.Template.Spec
				where := fmt.Sprintf("%s %s", file, d.Name)
				Expect(pod.InitContainers).To(HaveLen(1), where)
				Expect(pod.InitContainers[0].Args).To(Equal([]string{"migrate"}), where)
				Expect(pod.InitContainers[0].Image).To(Equal(pod.Containers[0].Image), where)
				Expect(pod.InitContainers[0].EnvFrom).To(Equal(pod.Containers[0].EnvFrom), where)
				Expect(pod.Containers[0].Args).To(Equal([]string{"serve"}), where)
			}
		}
	})

	It("wires each Deployment to a ConfigMap, a Secret and a ServiceAccount the chart renders", func() {
		objects := chartObjects(files[defaultFile])
		configMaps := names(typed[*corev1.ConfigMap](objects))
		secrets := names(typed[*corev1.Secret](objects))
		accounts := names(typed[*corev1.ServiceAccount](objects))
		for _, d := range typed[*appsv1.Deployment](objects) {
			pod := d.Spec.Template.Spec
			Expect(accounts).To(ContainElement(pod.ServiceAccountName), d.Name)
			var sawConfig, sawSecret bool
			for _, ref := range pod.Containers[0].EnvFrom {
				if ref.ConfigMapRef != nil {
					Expect(configMaps).To(ContainElement(ref.ConfigMapRef.Name), d.Name)
					sawConfig = true
				}
				if ref.SecretRef != nil {
					Expect(secrets).To(ContainElement(ref.SecretRef.Name), d.Name)
					sawSecret = true
				}
			}
			Expect(sawConfig && sawSecret).To(BeTrue(), d.Name)
		}
	})

	It("generates 32-byte signing and encryption keys and keeps the other secrets", func() {
		secrets := typed[*corev1.Secret](chartObjects(files[defaultFile]))
		Expect(secrets).To(HaveLen(3))
		for _, s := range secrets {
			component := s.Labels["app.kubernetes.io/component"]
			Expect(s.Data).To(HaveKey("DATABASE_URL"), s.Name)
			Expect(string(s.Data["DATABASE_URL"])).To(HaveSuffix("/"+component+"?sslmode=disable"), s.Name)
			keys := []string{"ENCRYPTION_KEY"}
			if component == "identity" {
				keys = append(keys, "SIGNING_KEY")
			}
			for _, key := range keys {
				raw, err := base64.StdEncoding.DecodeString(string(s.Data[key]))
				Expect(err).NotTo(HaveOccurred(), s.Name, key)
				Expect(raw).To(HaveLen(32), s.Name, key)
			}
			if component == "agentteam" {
				Expect(len(s.Data["SKILLS_ADMIN_KEY"])).To(BeNumerically(">=", 32), s.Name)
			}
		}
	})

	It("listens on every interface on each service's own port", func() {
		for file, objects := range charts {
			for _, cm := range typed[*corev1.ConfigMap](objects) {
				port := services[cm.Labels["app.kubernetes.io/component"]]
				Expect(port).NotTo(BeZero(), cm.Name)
				Expect(cm.Data).To(HaveKeyWithValue("HTTP_ADDR", fmt.Sprintf("0.0.0.0:%d", port)), file, cm.Name)
			}
		}
	})

	It("never lets identity-svc sign with a key it generated itself", func() {
		for file, objects := range charts {
			seen := false
			for _, cm := range typed[*corev1.ConfigMap](objects) {
				if cm.Labels["app.kubernetes.io/component"] == "identity" {
					Expect(cm.Data).To(HaveKeyWithValue("SIGNING_KEY_GENERATE", "false"), file, cm.Name)
					seen = true
				}
			}
			Expect(seen).To(BeTrue(), file)
		}
	})

	It("serves content-svc's public files from the configured base URL, the CDN in production", func() {
		for file, objects := range charts {
			for _, cm := range typed[*corev1.ConfigMap](objects) {
				if cm.Labels["app.kubernetes.io/component"] != "content" {
					continue
				}
				if file == productionFile {
					Expect(cm.Data).To(HaveKeyWithValue("S3_PUBLIC_BASE_URL", HavePrefix("https://")), cm.Name)
					Expect(cm.Data).To(HaveKeyWithValue("S3_PUBLIC_READ_POLICY", "false"), cm.Name)
				} else {
					Expect(cm.Data).To(HaveKeyWithValue("S3_PUBLIC_READ_POLICY", "true"), cm.Name)
				}
			}
		}
	})

	It("delivers verification codes for real in production instead of logging them", func() {
		seen := false
		for _, cm := range typed[*corev1.ConfigMap](charts[productionFile]) {
			if cm.Labels["app.kubernetes.io/component"] == "identity" {
				Expect(cm.Data).To(HaveKeyWithValue("NOTIFY_MODE", "live"), cm.Name)
				seen = true
			}
		}
		Expect(seen).To(BeTrue())
	})

	It("gives the S3 endpoint as host:port, the form minio-go expects", func() {
		for file, objects := range charts {
			for _, cm := range typed[*corev1.ConfigMap](objects) {
				Expect(cm.Data).To(HaveKeyWithValue("S3_ENDPOINT", MatchRegexp(`^[A-Za-z0-9.-]+:[0-9]+$`)), file, cm.Name)
				Expect(cm.Data).To(HaveKeyWithValue("S3_USE_SSL", BeElementOf("true", "false")), file, cm.Name)
			}
		}
	})

	It("points content-svc and agentteam-svc at the identity Service's JWKS", func() {
		for file, objects := range charts {
			var identity *corev1.Service
			for _, s := range typed[*corev1.Service](objects) {
				if s.Labels["app.kubernetes.io/component"] == "identity" {
					identity = s
				}
			}
			Expect(identity).NotTo(BeNil(), file)
			want := fmt.Sprintf("http://%s:%d/.well-known/jwks.json", identity.Name, identity.Spec.Ports[0].Port)
			seen := 0
			for _, cm := range typed[*corev1.ConfigMap](objects) {
				switch cm.Labels["app.kubernetes.io/component"] {
				case "content", "agentteam":
					Expect(cm.Data).To(HaveKeyWithValue("JWKS_URL", want), file, cm.Name)
					seen++
				case "identity":
					Expect(cm.Data).NotTo(HaveKey("JWKS_URL"), file, cm.Name)
				}
			}
			Expect(seen).To(Equal(2), file)
		}
	})

	It("routes each Service to its Deployment's named port", func() {
		for file, objects := range charts {
			deployments := typed[*appsv1.Deployment](objects)
			for _, s := range typed[*corev1.Service](objects) {
				selector := labels.SelectorFromSet(s.Spec.Selector)
				var matched []string
				for _, d := range deployments {
					if selector.Matches(labels.Set(d.Spec.Template.Labels)) {
						matched = append(matched, d.Name)
						Expect(s.Spec.Ports[0].TargetPort.String()).To(Equal(d.Spec.Template.Spec.Containers[0].Ports[0].Name), file, s.Name)
						Expect(s.Spec.Ports[0].Port).To(Equal(d.Spec.Template.Spec.Containers[0].Ports[0].ContainerPort), file, s.Name)
					}
				}
				Expect(matched).To(HaveLen(1), "%s: Service %s selects %v", file, s.Name, matched)
			}
		}
	})

	It("keeps disruption budgets and autoscalers on their own Deployment", func() {
		for file, objects := range charts {
			deployments := typed[*appsv1.Deployment](objects)
			for _, pdb := range typed[*policyv1.PodDisruptionBudget](objects) {
				selector := labels.SelectorFromSet(pdb.Spec.Selector.MatchLabels)
				matched := 0
				for _, d := range deployments {
					if selector.Matches(labels.Set(d.Spec.Template.Labels)) {
						matched++
					}
				}
				Expect(matched).To(Equal(1), "%s: PodDisruptionBudget %s", file, pdb.Name)
			}
			for _, hpa := range typed[*autoscalingv2.HorizontalPodAutoscaler](objects) {
				Expect(hpa.Spec.ScaleTargetRef.Kind).To(Equal("Deployment"), file, hpa.Name)
				Expect(names(deployments)).To(ContainElement(hpa.Spec.ScaleTargetRef.Name), file, hpa.Name)
				for _, d := range deployments {
					if d.Name == hpa.Spec.ScaleTargetRef.Name {
						Expect(d.Spec.Replicas).To(BeNil(), "%s: %s is autoscaled, so the chart must not set replicas", file, d.Name)
					}
				}
			}
		}
	})

	It("gives every container ephemeral-storage requests and limits, a CPU limit and a pull policy", func() {
		for file, objects := range charts {
			for _, d := range typed[*appsv1.Deployment](objects) {
				pod := d.Spec.Template.Spec
				for _, c := range append(append([]corev1.Container{}, pod.InitContainers...), pod.Containers...) {
					where := fmt.Sprintf("%s %s %s", file, d.Name, c.Name)
					Expect(c.Resources.Requests).To(HaveKey(corev1.ResourceEphemeralStorage), where)
					Expect(c.Resources.Limits).To(HaveKey(corev1.ResourceEphemeralStorage), where)
					Expect(c.Resources.Limits).To(HaveKey(corev1.ResourceCPU), where)
					Expect(c.ImagePullPolicy).To(Equal(corev1.PullAlways), where)
				}
			}
		}
	})

	It("lets Prometheus find production's pods through annotations where there is no ServiceMonitor CRD", func() {
		for _, d := range typed[*appsv1.Deployment](charts[productionFile]) {
			port := fmt.Sprint(d.Spec.Template.Spec.Containers[0].Ports[0].ContainerPort)
			Expect(d.Spec.Template.Annotations).To(HaveKeyWithValue("prometheus.io/scrape", "true"), d.Name)
			Expect(d.Spec.Template.Annotations).To(HaveKeyWithValue("prometheus.io/port", port), d.Name)
			Expect(d.Spec.Template.Annotations).To(HaveKeyWithValue("prometheus.io/path", "/metrics"), d.Name)
		}
		for _, d := range typed[*appsv1.Deployment](charts[defaultFile]) {
			Expect(d.Spec.Template.Annotations).NotTo(HaveKey("prometheus.io/scrape"), d.Name)
		}
	})

	It("fences each production service in with a NetworkPolicy of its own", func() {
		objects := charts[productionFile]
		deployments := map[string]*appsv1.Deployment{}
		for _, d := range typed[*appsv1.Deployment](objects) {
			deployments[d.Labels["app.kubernetes.io/component"]] = d
		}
		policies := typed[*networkingv1.NetworkPolicy](objects)
		Expect(policies).To(HaveLen(3))
		for _, np := range policies {
			component := np.Labels["app.kubernetes.io/component"]
			where := fmt.Sprintf("NetworkPolicy %s", np.Name)
			d := deployments[component]
			Expect(d).NotTo(BeNil(), where)

			selector := labels.SelectorFromSet(np.Spec.PodSelector.MatchLabels)
			for other, od := range deployments {
				Expect(selector.Matches(labels.Set(od.Spec.Template.Labels))).To(Equal(other == component), where, other)
			}
			Expect(np.Spec.PolicyTypes).To(ConsistOf(networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress), where)

			// Ingress: one rule, on the http port, from the ingress controller, Prometheus and,
			// for identity, the two services that read its JWKS.
			Expect(np.Spec.Ingress).To(HaveLen(1), where)
			rule := np.Spec.Ingress[0]
			Expect(rule.Ports).To(HaveLen(1), where)
			Expect(rule.Ports[0].Port.String()).To(Equal("http"), where)
			var callers []string
			var namespaces []string
			for _, peer := range rule.From {
				Expect(peer.IPBlock).To(BeNil(), where)
				if peer.NamespaceSelector != nil {
					namespaces = append(namespaces, peer.NamespaceSelector.MatchLabels["kubernetes.io/metadata.name"])
				} else {
					Expect(peer.PodSelector).NotTo(BeNil(), where)
					callers = append(callers, peer.PodSelector.MatchLabels["app.kubernetes.io/component"])
				}
			}
			Expect(namespaces).To(ConsistOf("ingress-nginx", "monitoring"), where)
			if component == "identity" {
				Expect(callers).To(ConsistOf("content", "agentteam"), where)
			} else {
				Expect(callers).To(BeEmpty(), where)
			}

			// Egress: DNS, the infrastructure's ports, identity for its callers, the outside for
			// identity and agentteam only.
			ports := map[string]bool{}
			outside := false
			for _, rule := range np.Spec.Egress {
				Expect(rule.To).NotTo(BeEmpty(), "%s: an egress rule without peers reaches everything", where)
				for _, p := range rule.Ports {
					ports[fmt.Sprintf("%s/%s", *p.Protocol, p.Port.String())] = true
				}
				for _, peer := range rule.To {
					if peer.IPBlock != nil && peer.IPBlock.CIDR == "0.0.0.0/0" {
						outside = true
						Expect(peer.IPBlock.Except).To(ContainElements("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"), where)
						Expect(rule.Ports).To(BeEmpty(), where)
					}
				}
			}
			Expect(ports).To(HaveKey("UDP/53"), where)
			Expect(ports).To(HaveKey("TCP/53"), where)
			for _, port := range []string{"TCP/5432", "TCP/6380", "TCP/4222", "TCP/443"} {
				Expect(ports).To(HaveKey(port), where)
			}
			Expect(ports["TCP/8081"]).To(Equal(component != "identity"), "%s: egress to identity's port", where)
			Expect(ports["TCP/587"]).To(Equal(component == "identity"), "%s: egress to the SMTP relay", where)
			Expect(outside).To(Equal(component != "content"), where)
		}
	})
})
