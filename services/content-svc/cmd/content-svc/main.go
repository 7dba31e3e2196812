// Command content-svc runs the content service: `serve` (migrate, then serve HTTP and relay
// events) and `migrate`.
package main

import (
	"github.com/motionstudio/platform/pkg/service"
	"github.com/motionstudio/platform/services/content-svc/internal/app"
	"github.com/motionstudio/platform/services/content-svc/internal/config"
)

func main() {
	service.Main(service.Program[config.Config, *app.App]{
		Name: app.Name, Load: config.Load, LogLevel: func(c config.Config) string { return c.LogLevel },
		Migrate: app.Migrate, New: app.New,
	})
}
