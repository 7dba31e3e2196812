package apikey_test

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/services/identity-svc/internal/apikey"
)

var _ = Describe("API key secrets", func() {
	It("mint distinct well-formed secrets whose stored parts identify but do not reveal them", func() {
		seen := map[string]bool{}
		for range 200 {
			m, err := apikey.Mint("ms", apikey.EnvTest)
			Expect(err).NotTo(HaveOccurred())
			Expect(m.Secret).To(MatchRegexp(`^ms_test_[0-9A-Za-z]{38}$`))
			Expect(apikey.WellFormed("ms", m.Secret)).To(BeTrue())
			Expect(m.Prefix).To(Equal(m.Secret[:16]))
			Expect(apikey.PrefixOf("ms", m.Secret)).To(Equal(m.Prefix))
			Expect(m.Last4).To(Equal(m.Secret[len(m.Secret)-4:]))
			sum := sha256.Sum256([]byte(m.Secret))
			Expect(m.Hash).To(Equal(hex.EncodeToString(sum[:])))
			Expect(seen[m.Secret]).To(BeFalse())
			seen[m.Secret] = true
		}
	})

	It("refuse a mistyped, truncated or foreign key by its checksum", func() {
		m, err := apikey.Mint("ms", apikey.EnvLive)
		Expect(err).NotTo(HaveOccurred())
		body := []byte(m.Secret)
		i := len("ms_live_") + 3
		if body[i] == 'a' {
			body[i] = 'b'
		} else {
			body[i] = 'a'
		}
		Expect(apikey.WellFormed("ms", string(body))).To(BeFalse())
		Expect(apikey.WellFormed("ms", m.Secret[:len(m.Secret)-1])).To(BeFalse())
		Expect(apikey.WellFormed("other", m.Secret)).To(BeFalse())
		Expect(apikey.WellFormed("ms", strings.Replace(m.Secret, "_live_", "_prod_", 1))).To(BeFalse())
		Expect(apikey.PrefixOf("ms", "ms_live_garbage")).To(BeEmpty())
	})
})
