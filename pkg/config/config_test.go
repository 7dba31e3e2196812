package config_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/config"
)

type nested struct {
	URL string `env:"NESTED_URL" default:"nats://127.0.0.1:4222"`
}

type settings struct {
	Nested   nested
	Name     string        `env:"NAME" default:"svc"`
	Port     int           `env:"PORT" default:"8080"`
	Debug    bool          `env:"DEBUG"`
	Ratio    float64       `env:"RATIO" default:"0.5"`
	Timeout  time.Duration `env:"TIMEOUT" default:"5s"`
	Origins  []string      `env:"ORIGINS"`
	Secret   string        `env:"SECRET" required:"true"`
	Untagged string
}

func lookup(env map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := env[k]; return v, ok }
}

var _ = Describe("loading configuration from the environment", func() {
	It("uses defaults for unset variables and parses set ones, including nested structs", func() {
		var s settings
		Expect(config.LoadFrom(lookup(map[string]string{
			"PORT": "9090", "DEBUG": "true", "TIMEOUT": "1m", "ORIGINS": "a.test, b.test,", "SECRET": "x", "NESTED_URL": "nats://n:1",
		}), &s)).To(Succeed())
		Expect(s).To(Equal(settings{
			Nested: nested{URL: "nats://n:1"}, Name: "svc", Port: 9090, Debug: true, Ratio: 0.5,
			Timeout: time.Minute, Origins: []string{"a.test", "b.test"}, Secret: "x",
		}))
	})

	It("reports every unparsable or missing required variable at once", func() {
		var s settings
		err := config.LoadFrom(lookup(map[string]string{"PORT": "eighty", "TIMEOUT": "soon"}), &s)
		Expect(err).To(MatchError(ContainSubstring("PORT")))
		Expect(err).To(MatchError(ContainSubstring("TIMEOUT")))
		Expect(err).To(MatchError(ContainSubstring("SECRET is required")))
	})

	It("refuses a number or duration below its min, naming the variable and the floor", func() {
		type limits struct {
			Steps   int           `env:"STEPS" default:"20" min:"1"`
			Ratio   float64       `env:"SHARE" default:"0.5" min:"0.1"`
			Timeout time.Duration `env:"WAIT" default:"1m" min:"1s"`
		}
		var l limits
		Expect(config.LoadFrom(lookup(nil), &l)).To(Succeed())
		Expect(l).To(Equal(limits{Steps: 20, Ratio: 0.5, Timeout: time.Minute}))
		Expect(config.LoadFrom(lookup(map[string]string{"STEPS": "1", "SHARE": "0.1", "WAIT": "1s"}), &l)).To(Succeed())
		err := config.LoadFrom(lookup(map[string]string{"STEPS": "0", "SHARE": "0.05", "WAIT": "500ms"}), &l)
		Expect(err).To(MatchError(ContainSubstring(`STEPS="0": must be at least 1`)))
		Expect(err).To(MatchError(ContainSubstring(`SHARE="0.05": must be at least 0.1`)))
		Expect(err).To(MatchError(ContainSubstring(`WAIT="500ms": must be at least 1s`)))
	})

	It("refuses a destination that is not a pointer to a struct", func() {
		Expect(config.LoadFrom(lookup(nil), settings{})).To(MatchError(ContainSubstring("pointer to a struct")))
	})
})
