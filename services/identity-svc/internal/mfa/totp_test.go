package mfa_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"github.com/motionstudio/platform/services/identity-svc/internal/mfa"
)

var opts = totp.ValidateOpts{Period: 30, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1}

var _ = Describe("TOTP", func() {
	It("computes the codes an independent implementation computes", func() {
		for i := range 20 {
			secret := mfa.NewSecret()
			at := time.Unix(1_700_000_000+int64(i)*7919, 0)
			want, err := totp.GenerateCodeCustom(mfa.EncodeSecret(secret), at, opts)
			Expect(err).NotTo(HaveOccurred())
			Expect(mfa.Code(secret, mfa.Step(at))).To(Equal(want))
		}
	})

	It("accepts one step of skew and nothing further", func() {
		secret := mfa.NewSecret()
		now := time.Unix(1_700_000_015, 0)
		for _, d := range []time.Duration{-30 * time.Second, 0, 30 * time.Second} {
			code, _ := totp.GenerateCodeCustom(mfa.EncodeSecret(secret), now.Add(d), opts)
			step, ok := mfa.Match(secret, code, now)
			Expect(ok).To(BeTrue(), "offset %s", d)
			Expect(step).To(Equal(mfa.Step(now.Add(d))))
		}
		for _, d := range []time.Duration{-61 * time.Second, 61 * time.Second} {
			code, _ := totp.GenerateCodeCustom(mfa.EncodeSecret(secret), now.Add(d), opts)
			if code == mfa.Code(secret, mfa.Step(now)) {
				continue
			}
			_, ok := mfa.Match(secret, code, now)
			Expect(ok).To(BeFalse(), "offset %s", d)
		}
		_, ok := mfa.Match(secret, "12345", now)
		Expect(ok).To(BeFalse())
	})

	It("writes a provisioning URL authenticator apps read", func() {
		secret := mfa.NewSecret()
		key, err := otp.NewKeyFromURL(mfa.URL("Motion Studio", "ada@example.test", secret))
		Expect(err).NotTo(HaveOccurred())
		Expect(key.Issuer()).To(Equal("Motion Studio"))
		Expect(key.AccountName()).To(Equal("ada@example.test"))
		Expect(key.Secret()).To(Equal(mfa.EncodeSecret(secret)))
		Expect(key.Period()).To(BeEquivalentTo(30))
	})
})

var _ = Describe("recovery codes", func() {
	It("are distinct and normalize what people type", func() {
		codes := mfa.RecoveryCodes(10)
		Expect(codes).To(HaveLen(10))
		seen := map[string]bool{}
		for _, c := range codes {
			Expect(c).To(MatchRegexp(`^[a-z2-7]{5}-[a-z2-7]{5}$`))
			seen[c] = true
		}
		Expect(seen).To(HaveLen(10))
		Expect(mfa.NormalizeRecoveryCode(" ABCDE-fghij ")).To(Equal("abcdefghij"))
	})
})
