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

var _ = Describe("the form of a presented prefix and hash", func() {
	DescribeTable("prefixes",
		func(prefix string, valid bool) { Expect(apikey.ValidPrefix(prefix)).To(Equal(valid)) },
		Entry("a minted one", "ms_live_Ab3dE6gH", true),
		Entry("a test key's", "brand2_test_00000000", true),
		Entry("a 16-character brand", "abcdefghijklmnop_live_abcdefgh", true),
		Entry("a 17-character brand", "abcdefghijklmnopq_live_abcdefgh", false),
		Entry("a brand starting with a digit", "2ms_live_abcdefgh", false),
		Entry("an upper-case brand", "Ms_live_abcdefgh", false),
		Entry("no brand", "_live_abcdefgh", false),
		Entry("another environment", "ms_prod_abcdefgh", false),
		Entry("7 random characters", "ms_live_abcdefg", false),
		Entry("9 random characters", "ms_live_abcdefghi", false),
		Entry("a symbol among them", "ms_live_abcd-fgh", false),
		Entry("a non-ASCII letter", "ms_live_abcdéfg", false),
		Entry("nothing", "", false),
		Entry("no separators", "mslivexabcdefgh", false),
	)
	DescribeTable("hashes",
		func(hash string, valid bool) { Expect(apikey.ValidHash(hash)).To(Equal(valid)) },
		Entry("a SHA-256", strings.Repeat("0123456789abcdef", 4), true),
		Entry("upper-case hex", strings.Repeat("0123456789ABCDEF", 4), false),
		Entry("63 digits", strings.Repeat("a", 63), false),
		Entry("65 digits", strings.Repeat("a", 65), false),
		Entry("a non-hex letter", strings.Repeat("a", 63)+"g", false),
	)
})
