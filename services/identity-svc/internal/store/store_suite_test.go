package store_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/outbox"
	"github.com/motionstudio/platform/pkg/testkit"
	"github.com/motionstudio/platform/services/identity-svc/internal/store"
)

func TestStore(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "identity-svc store")
}

var (
	db  *gorm.DB
	dsn string
)

var _ = BeforeSuite(func() {
	db, dsn = testkit.NewDatabase("identity_store", outbox.Migrations, store.Migrations)
})
