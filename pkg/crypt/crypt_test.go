package crypt_test

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/crypt"
)

func newKey() []byte {
	key := make([]byte, crypt.KeySize)
	_, _ = rand.Read(key)
	return key
}

func ring(keys ...crypt.Key) *crypt.Ring {
	r, err := crypt.NewRing(keys...)
	Expect(err).NotTo(HaveOccurred())
	return r
}

// legacySeal seals the way pkg/crypt did before key ids: nonce || ciphertext, no header.
func legacySeal(key, plain, aad []byte) []byte {
	block, err := aes.NewCipher(key)
	Expect(err).NotTo(HaveOccurred())
	aead, err := cipher.NewGCM(block)
	Expect(err).NotTo(HaveOccurred())
	nonce := make([]byte, aead.NonceSize())
	_, _ = rand.Read(nonce)
	return aead.Seal(nonce, nonce, plain, aad)
}

var _ = Describe("sealing secrets under a key ring", func() {
	var a, b crypt.Key
	BeforeEach(func() {
		a = crypt.Key{ID: "2026-01", Secret: newKey()}
		b = crypt.Key{ID: "2026-11", Secret: newKey()}
	})

	It("opens what it sealed for the same row, and the ciphertext hides the plaintext", func() {
		r := ring(a)
		sealed, err := r.Seal([]byte("JBSWY3DPEHPK3PXP"), []byte("row-1"))
		Expect(err).NotTo(HaveOccurred())
		Expect(bytes.Contains(sealed, []byte("JBSWY3DPEHPK3PXP"))).To(BeFalse())
		plain, err := r.Open(sealed, []byte("row-1"))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(plain)).To(Equal("JBSWY3DPEHPK3PXP"))
	})

	It("seals with the first key and opens with every key", func() {
		old, _ := ring(a).Seal([]byte("under a"), []byte("row-1"))
		both := ring(b, a)
		Expect(both.SealingID()).To(Equal("2026-11"))
		plain, err := both.Open(old, []byte("row-1"))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(plain)).To(Equal("under a"))

		fresh, _ := both.Seal([]byte("under b"), []byte("row-2"))
		plain, err = ring(b).Open(fresh, []byte("row-2"))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(plain)).To(Equal("under b"))
		_, err = ring(a).Open(fresh, []byte("row-2"))
		Expect(err).To(MatchError(crypt.ErrUnknownKey))
	})

	It("refuses a value sealed under a key id it does not hold, as a value it cannot open", func() {
		sealed, _ := ring(a).Seal([]byte("secret"), []byte("row-1"))
		_, err := ring(b).Open(sealed, []byte("row-1"))
		Expect(err).To(MatchError(crypt.ErrUnknownKey))
		Expect(errors.Is(err, crypt.ErrOpen)).To(BeTrue())
	})

	It("refuses another row, a flipped bit, a swapped key id and another key under the same id", func() {
		r := ring(b, a)
		sealed, _ := r.Seal([]byte("secret"), []byte("row-1"))
		_, err := r.Open(sealed, []byte("row-2"))
		Expect(err).To(MatchError(crypt.ErrOpen))
		tampered := bytes.Clone(sealed)
		tampered[len(tampered)-1] ^= 1
		_, err = r.Open(tampered, []byte("row-1"))
		Expect(err).To(MatchError(crypt.ErrOpen))
		swapped := bytes.Replace(bytes.Clone(sealed), []byte("2026-11"), []byte("2026-01"), 1)
		_, err = r.Open(swapped, []byte("row-1"))
		Expect(err).To(MatchError(crypt.ErrOpen))
		_, err = ring(crypt.Key{ID: "2026-11", Secret: newKey()}).Open(sealed, []byte("row-1"))
		Expect(err).To(MatchError(crypt.ErrOpen))
		_, err = r.Open(sealed[:5], []byte("row-1"))
		Expect(err).To(MatchError(crypt.ErrOpen))
	})

	It("opens a value sealed before key ids under the key named default, and only there", func() {
		legacyKey := newKey()
		old := legacySeal(legacyKey, []byte("old secret"), []byte("row-1"))
		r := ring(b, crypt.Key{ID: crypt.LegacyID, Secret: legacyKey})
		plain, err := r.Open(old, []byte("row-1"))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(plain)).To(Equal("old secret"))
		_, err = ring(b).Open(old, []byte("row-1"))
		Expect(err).To(MatchError(crypt.ErrOpen))
		_, err = r.Open(old, []byte("row-2"))
		Expect(err).To(MatchError(crypt.ErrOpen))
	})

	It("opens a legacy value whose random nonce happens to look like a header", func() {
		legacyKey := newKey()
		block, _ := aes.NewCipher(legacyKey)
		aead, _ := cipher.NewGCM(block)
		nonce := append([]byte{'K', 1, 7}, []byte("2026-11abc")...)[:aead.NonceSize()]
		old := aead.Seal(bytes.Clone(nonce), nonce, []byte("old secret"), []byte("row-1"))
		plain, err := ring(b, crypt.Key{ID: crypt.LegacyID, Secret: legacyKey}).Open(old, []byte("row-1"))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(plain)).To(Equal("old secret"))
	})

	It("reseals what another key sealed, and leaves what the first key sealed alone", func() {
		legacyKey := newKey()
		r := ring(b, a, crypt.Key{ID: crypt.LegacyID, Secret: legacyKey})
		for _, old := range [][]byte{
			legacySeal(legacyKey, []byte("v"), []byte("row-1")),
			func() []byte { s, _ := ring(a).Seal([]byte("v"), []byte("row-1")); return s }(),
		} {
			out, resealed, err := r.Reseal(old, []byte("row-1"))
			Expect(err).NotTo(HaveOccurred())
			Expect(resealed).To(BeTrue())
			plain, err := ring(b).Open(out, []byte("row-1"))
			Expect(err).NotTo(HaveOccurred())
			Expect(string(plain)).To(Equal("v"))

			again, resealed, err := r.Reseal(out, []byte("row-1"))
			Expect(err).NotTo(HaveOccurred())
			Expect(resealed).To(BeFalse())
			Expect(again).To(Equal(out))
		}
		_, _, err := ring(b).Reseal(legacySeal(legacyKey, []byte("v"), []byte("row-1")), []byte("row-1"))
		Expect(err).To(MatchError(crypt.ErrOpen))
	})

	It("refuses rings without keys, with duplicate or malformed ids, or short keys", func() {
		_, err := crypt.NewRing()
		Expect(err).To(HaveOccurred())
		_, err = crypt.NewRing(a, crypt.Key{ID: a.ID, Secret: newKey()})
		Expect(err).To(MatchError(ContainSubstring("appears twice")))
		_, err = crypt.NewRing(crypt.Key{ID: "has space", Secret: newKey()})
		Expect(err).To(MatchError(ContainSubstring("key id")))
		_, err = crypt.NewRing(crypt.Key{ID: "k", Secret: newKey()[:16]})
		Expect(err).To(MatchError(ContainSubstring("32 bytes")))
	})

	It("parses ENCRYPTION_KEYS in order and never echoes a key in its errors", func() {
		k1, k2 := newKey(), newKey()
		keys, err := crypt.ParseKeys("new:" + base64.StdEncoding.EncodeToString(k1) + ", default:" + base64.RawURLEncoding.EncodeToString(k2))
		Expect(err).NotTo(HaveOccurred())
		Expect(keys).To(Equal([]crypt.Key{{ID: "new", Secret: k1}, {ID: "default", Secret: k2}}))

		short := base64.StdEncoding.EncodeToString(k1[:16])
		_, err = crypt.ParseKeys("new:" + short)
		Expect(err).To(MatchError(ContainSubstring(`"new"`)))
		Expect(err.Error()).NotTo(ContainSubstring(short))
		_, err = crypt.ParseKeys(base64.StdEncoding.EncodeToString(k1))
		Expect(err).To(MatchError(ContainSubstring("entry 1 is not id:base64key")))
		Expect(err.Error()).NotTo(ContainSubstring(base64.StdEncoding.EncodeToString(k1)))
	})

	It("loads ENCRYPTION_KEYS, then ENCRYPTION_KEY as the key default, else the fallback", func() {
		k1, k2, k3 := newKey(), newKey(), newKey()
		fallback := func() ([]byte, error) { return k3, nil }
		opens := func(r *crypt.Ring, k crypt.Key) {
			GinkgoHelper()
			sealed, _ := ring(k).Seal([]byte("v"), nil)
			_, err := r.Open(sealed, nil)
			Expect(err).NotTo(HaveOccurred())
		}
		r, err := crypt.LoadRing("new:"+base64.StdEncoding.EncodeToString(k1), "", fallback)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.SealingID()).To(Equal("new"))
		_, err = r.Open(legacySeal(k3, []byte("v"), nil), nil)
		Expect(err).To(MatchError(crypt.ErrOpen), "no fallback next to configured keys")

		r, err = crypt.LoadRing("", base64.StdEncoding.EncodeToString(k2), fallback)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.SealingID()).To(Equal(crypt.LegacyID))
		opens(r, crypt.Key{ID: crypt.LegacyID, Secret: k2})

		r, err = crypt.LoadRing("new:"+base64.StdEncoding.EncodeToString(k1), base64.StdEncoding.EncodeToString(k2), fallback)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.SealingID()).To(Equal("new"))
		opens(r, crypt.Key{ID: crypt.LegacyID, Secret: k2})

		r, err = crypt.LoadRing("", "", fallback)
		Expect(err).NotTo(HaveOccurred())
		opens(r, crypt.Key{ID: crypt.LegacyID, Secret: k3})

		_, err = crypt.LoadRing("default:"+base64.StdEncoding.EncodeToString(k1), base64.StdEncoding.EncodeToString(k2), fallback)
		Expect(err).To(MatchError(ContainSubstring("appears twice")))
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
