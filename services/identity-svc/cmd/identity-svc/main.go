// Command identity-svc runs the identity service: `serve` (migrate, then serve HTTP and relay
// events), `migrate`, and `admin` (operator CLI).
package main

import (
	"github.com/motionstudio/platform/pkg/service"
	"github.com/motionstudio/platform/services/identity-svc/internal/app"
	"github.com/motionstudio/platform/services/identity-svc/internal/config"
)

func main() {
	service.Main(service.Program[config.Config, *app.App]{
		Name: app.Name, Load: config.Load, LogLevel: func(c config.Config) string { return c.LogLevel },
		Migrate: app.Migrate, New: app.New,
		Commands: []service.Command[config.Config]{{Name: "admin", Usage: "admin <command>", Run: app.Admin}},
	})
}
