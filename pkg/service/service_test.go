package service_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/service"
)

type config struct{ level string }

// app records what the runner did with it.
type app struct {
	steps *[]string
	run   func(ctx context.Context) error
}

func (a *app) Run(ctx context.Context) error {
	*a.steps = append(*a.steps, "run")
	return a.run(ctx)
}

func (a *app) Close() { *a.steps = append(*a.steps, "close") }

func program(steps *[]string, run func(ctx context.Context) error) service.Program[config, *app] {
	return service.Program[config, *app]{
		Name:     "demo-svc",
		Load:     func() (config, error) { return config{level: "debug"}, nil },
		LogLevel: func(c config) string { return c.level },
		Migrate: func(_ context.Context, _ config, log *slog.Logger) error {
			log.Debug("migrated")
			*steps = append(*steps, "migrate")
			return nil
		},
		New: func(context.Context, config, *slog.Logger) (*app, error) {
			*steps = append(*steps, "new")
			return &app{steps: steps, run: run}, nil
		},
		Commands: []service.Command[config]{{
			Name: "greet", Usage: "greet [-loud]",
			Run: func(_ context.Context, _ config, _ *slog.Logger, args []string, stdout io.Writer) error {
				*steps = append(*steps, "greet")
				_, err := fmt.Fprintln(stdout, "hello", args)
				return err
			},
		}},
	}
}

var _ = Describe("running a service binary", func() {
	var (
		steps          []string
		stdout, stderr bytes.Buffer
	)
	BeforeEach(func() {
		steps = nil
		stdout.Reset()
		stderr.Reset()
	})

	It("answers the usage line, naming every subcommand, without one or with an unknown one", func() {
		p := program(&steps, nil)
		const usage = "usage: demo-svc serve | migrate | greet [-loud]"
		Expect(p.Run(context.Background(), nil, &stdout, &stderr)).To(MatchError(usage))
		Expect(p.Run(context.Background(), []string{"dance"}, &stdout, &stderr)).To(MatchError(usage))
		Expect(steps).To(BeEmpty())
	})

	It("migrates, then builds, runs and closes the app on serve", func() {
		p := program(&steps, func(ctx context.Context) error { return errors.New("port taken") })
		Expect(p.Run(context.Background(), []string{"serve"}, &stdout, &stderr)).To(MatchError("port taken"))
		Expect(steps).To(Equal([]string{"migrate", "new", "run", "close"}))
	})

	It("does not build the app when the migration fails", func() {
		p := program(&steps, nil)
		p.Migrate = func(context.Context, config, *slog.Logger) error { return errors.New("database down") }
		Expect(p.Run(context.Background(), []string{"serve"}, &stdout, &stderr)).To(MatchError("database down"))
		Expect(steps).To(BeEmpty())
	})

	It("only migrates on migrate, logging at the configured level under the binary's name", func() {
		p := program(&steps, nil)
		Expect(p.Run(context.Background(), []string{"migrate"}, &stdout, &stderr)).To(Succeed())
		Expect(steps).To(Equal([]string{"migrate"}))
		Expect(stderr.String()).To(And(ContainSubstring(`"msg":"migrated"`), ContainSubstring(`"service":"demo-svc"`)))
	})

	It("hands a command the arguments after its name and stdout", func() {
		p := program(&steps, nil)
		Expect(p.Run(context.Background(), []string{"greet", "-loud"}, &stdout, &stderr)).To(Succeed())
		Expect(steps).To(Equal([]string{"greet"}))
		Expect(stdout.String()).To(Equal("hello [-loud]\n"))
	})

	It("returns the configuration's error before running anything", func() {
		p := program(&steps, nil)
		p.Load = func() (config, error) { return config{}, errors.New("config: HTTP_ADDR is not an address") }
		Expect(p.Run(context.Background(), []string{"migrate"}, &stdout, &stderr)).To(MatchError(ContainSubstring("HTTP_ADDR")))
		Expect(steps).To(BeEmpty())
	})
})

var _ = Describe("running workers together", func() {
	It("stops every worker when the context is done and returns nil", func() {
		ctx, cancel := context.WithCancel(context.Background())
		stopped := make(chan string, 2)
		wait := func(name string) service.Worker {
			return service.WorkerFunc(func(ctx context.Context) error {
				<-ctx.Done()
				stopped <- name
				return nil
			})
		}
		done := make(chan error, 1)
		go func() { done <- service.RunAll(ctx, wait("a"), wait("b")) }()
		Consistently(done, 50*time.Millisecond).ShouldNot(Receive())
		cancel()
		Eventually(done).Should(Receive(BeNil()))
		Expect(stopped).To(HaveLen(2))
	})

	It("stops the others when one fails and returns its error", func() {
		other := make(chan struct{})
		err := service.RunAll(context.Background(),
			service.WorkerFunc(func(ctx context.Context) error {
				<-ctx.Done()
				close(other)
				return nil
			}),
			service.WorkerFunc(func(context.Context) error { return errors.New("consumer: stream gone") }),
		)
		Expect(err).To(MatchError("consumer: stream gone"))
		Expect(other).To(BeClosed())
	})
})

var _ = Describe("releasing what was opened", func() {
	It("closes in reverse order of opening, once", func() {
		var order []string
		var c service.Closers
		for _, name := range []string{"tracing", "postgres", "redis", "nats"} {
			c.Add(func() { order = append(order, name) })
		}
		c.Close()
		c.Close()
		Expect(order).To(Equal([]string{"nats", "redis", "postgres", "tracing"}))
	})
})

var _ = Describe("the injected clock and ids", func() {
	It("tells the time in UTC", func() {
		Expect(service.Now().Location()).To(Equal(time.UTC))
	})

	It("makes time-ordered UUID v7 ids", func() {
		a, b := service.NewID(), service.NewID()
		Expect(a).To(MatchRegexp(`^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`))
		Expect(a < b).To(BeTrue())
	})
})

var _ = Describe("Sleep", func() {
	It("returns nil once the duration has passed", func(ctx SpecContext) {
		start := time.Now()
		Expect(service.Sleep(ctx, 20*time.Millisecond)).To(Succeed())
		Expect(time.Since(start)).To(BeNumerically(">=", 20*time.Millisecond))
	})

	It("returns the context's error as soon as it is done", func() {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		Expect(service.Sleep(ctx, time.Hour)).To(MatchError(context.Canceled))
	})
})
