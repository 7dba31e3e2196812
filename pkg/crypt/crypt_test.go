package crypt_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/crypt"
)

var _ = Describe("sealing secrets", func() {
	var box *crypt.Box
	BeforeEach(func() {
		key := make([]byte, crypt.KeySize)
		_, _ = rand.Read(key)
		var err error
		box, err = crypt.New(key)
		Expect(err).NotTo(HaveOccurred())
	})

	It("opens what it sealed for the same row, and the ciphertext hides the plaintext", func() {
		sealed, err := box.Seal([]byte("JBSWY3DPEHPK3PXP"), []byte("row-1"))
		Expect(err).NotTo(HaveOccurred())
		Expect(bytes.Contains(sealed, []byte("JBSWY3DPEHPK3PXP"))).To(BeFalse())
		plain, err := box.Open(sealed, []byte("row-1"))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(plain)).To(Equal("JBSWY3DPEHPK3PXP"))
	})

	It("refuses another row, a flipped bit and another key", func() {
		sealed, _ := box.Seal([]byte("secret"), []byte("row-1"))
		_, err := box.Open(sealed, []byte("row-2"))
		Expect(err).To(MatchError(crypt.ErrOpen))
		tampered := bytes.Clone(sealed)
		tampered[len(tampered)-1] ^= 1
		_, err = box.Open(tampered, []byte("row-1"))
		Expect(err).To(MatchError(crypt.ErrOpen))
		other, _ := crypt.New(bytes.Repeat([]byte{7}, crypt.KeySize))
		_, err = other.Open(sealed, []byte("row-1"))
		Expect(err).To(MatchError(crypt.ErrOpen))
	})

	It("parses base64 keys of 32 bytes only", func() {
		key := bytes.Repeat([]byte{1}, 32)
		_, err := crypt.ParseKey(base64.StdEncoding.EncodeToString(key))
		Expect(err).NotTo(HaveOccurred())
		_, err = crypt.ParseKey(base64.StdEncoding.EncodeToString(key[:16]))
		Expect(err).To(HaveOccurred())
	})

	It("derives a stable key per signing key and purpose", func() {
		_, priv, _ := ed25519.GenerateKey(rand.Reader)
		a, _ := crypt.DeriveKey(priv, "p1")
		b, _ := crypt.DeriveKey(priv, "p1")
		c, _ := crypt.DeriveKey(priv, "p2")
		Expect(a).To(Equal(b))
		Expect(a).NotTo(Equal(c))
		Expect(a).To(HaveLen(crypt.KeySize))
	})
})
