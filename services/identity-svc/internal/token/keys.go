package token

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/lestrrat-go/jwx/v2/jwk"

	"github.com/motionstudio/platform/pkg/authn"
)

// KeySource says where the Ed25519 signing key comes from: an inline base64 seed, a file
// (PEM PKCS#8 or a base64 seed), or, when Generate is set and the file does not exist yet, a
// freshly generated key written to the file (local development).
type KeySource struct {
	Inline   string
	File     string
	Generate bool
}

// LoadKey returns the signing key described by src.
func LoadKey(src KeySource) (ed25519.PrivateKey, error) {
	if src.Inline != "" {
		return parseKey([]byte(src.Inline))
	}
	if src.File == "" {
		return nil, errors.New("token: no signing key: set SIGNING_KEY or SIGNING_KEY_FILE")
	}
	raw, err := os.ReadFile(src.File)
	if errors.Is(err, os.ErrNotExist) && src.Generate {
		return generateKey(src.File)
	}
	if err != nil {
		return nil, fmt.Errorf("token: read signing key: %w", err)
	}
	return parseKey(raw)
}

func parseKey(raw []byte) (ed25519.PrivateKey, error) {
	if block, _ := pem.Decode(raw); block != nil {
		k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("token: parse PEM signing key: %w", err)
		}
		key, ok := k.(ed25519.PrivateKey)
		if !ok {
			return nil, errors.New("token: PEM signing key is not Ed25519")
		}
		return key, nil
	}
	seed, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(raw)))
	if err != nil || len(seed) != ed25519.SeedSize {
		return nil, errors.New("token: signing key must be PEM PKCS#8 Ed25519 or a base64 32-byte seed")
	}
	return ed25519.NewKeyFromSeed(seed), nil
}

func generateKey(path string) (ed25519.PrivateKey, error) {
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("token: generate signing key: %w", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("token: encode signing key: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("token: signing key dir: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600) // #nosec G304 -- the signing key path is the operator's configuration
	if errors.Is(err, os.ErrExist) {
		// Another process generated it first; use theirs.
		return LoadKey(KeySource{File: path})
	}
	if err != nil {
		return nil, fmt.Errorf("token: write signing key: %w", err)
	}
	defer f.Close()
	if err := pem.Encode(f, &pem.Block{Type: "PRIVATE KEY", Bytes: der}); err != nil {
		return nil, fmt.Errorf("token: write signing key: %w", err)
	}
	return key, nil
}

// checkAlg fails unless alg is one the service signs with.
func checkAlg(alg string) error {
	switch alg {
	case authn.AlgEdDSA, authn.AlgES256, authn.AlgRS256:
		return nil
	default:
		return fmt.Errorf("token: signing algorithm %q: want EdDSA, ES256 or RS256", alg)
	}
}

// GenerateKey makes a new private key for alg: Ed25519 for EdDSA, P-256 for ES256, RSA 3072
// for RS256.
func GenerateKey(alg string) (crypto.Signer, error) {
	var (
		key crypto.Signer
		err error
	)
	switch alg {
	case authn.AlgEdDSA:
		_, key, err = ed25519.GenerateKey(rand.Reader)
	case authn.AlgES256:
		key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case authn.AlgRS256:
		key, err = rsa.GenerateKey(rand.Reader, 3072)
	default:
		return nil, checkAlg(alg)
	}
	if err != nil {
		return nil, fmt.Errorf("token: generate %s key: %w", alg, err)
	}
	return key, nil
}

// algorithmOf is the algorithm a key signs with.
func algorithmOf(key crypto.Signer) (string, error) {
	switch key.(type) {
	case ed25519.PrivateKey:
		return authn.AlgEdDSA, nil
	case *ecdsa.PrivateKey:
		return authn.AlgES256, nil
	case *rsa.PrivateKey:
		return authn.AlgRS256, nil
	default:
		return "", fmt.Errorf("token: key type %T is not ed25519, ecdsa or rsa", key)
	}
}

// KeyID is the RFC 7638 thumbprint (SHA-256, base64url) of the public key, used as `kid`, so
// that the same key always has the same id across replicas and restarts.
func KeyID(pub crypto.PublicKey) (string, error) {
	k, err := jwk.FromRaw(pub)
	if err != nil {
		return "", fmt.Errorf("token: key id: %w", err)
	}
	tp, err := k.Thumbprint(crypto.SHA256)
	if err != nil {
		return "", fmt.Errorf("token: key id: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(tp), nil
}
