// Command agentteam-svc runs the agent-team service: `serve` (migrate, then serve HTTP and relay
// events), `migrate`, `seed-memory [-entries N] [-member UUID]`, which seeds a team with N
// memory entries for the search benchmark and prints shell assignments of the ids it made, and
// `admin reseal [-batch N]`, which seals every secret at rest again under the first key of
// ENCRYPTION_KEYS.
package main

import (
	"github.com/motionstudio/platform/pkg/service"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/app"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/config"
)

func main() {
	service.Main(service.Program[config.Config, *app.App]{
		Name: app.Name, Load: config.Load, LogLevel: func(c config.Config) string { return c.LogLevel },
		Migrate: app.Migrate, New: app.New,
		Commands: []service.Command[config.Config]{
			{Name: "seed-memory", Usage: "seed-memory [-entries N] [-member UUID]", Run: app.SeedMemoryCommand},
			{Name: "admin", Usage: "admin reseal [-batch N]", Run: app.Admin},
		},
	})
}
