module github.com/motionstudio/platform/services/agentteam-svc

go 1.26.8
