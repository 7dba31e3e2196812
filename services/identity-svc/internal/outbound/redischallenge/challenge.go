// Package redischallenge keeps one-time challenges (email and phone verification, password reset,
// MFA codes) in Redis under "<prefix>challenge:<purpose>:<token hash>", implementing
// auth.Challenges. A challenge expires with its key, is deleted when it is used, and is
// deleted after too many wrong codes. Redis failures are apperr Unavailable.
package redischallenge

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/check"
	"github.com/motionstudio/platform/services/identity-svc/internal/auth"
)

// Store implements auth.Challenges over Redis.
type Store struct {
	rdb    *redis.Client
	prefix string
}

// NewStore returns a Store whose keys start with prefix.
func NewStore(rdb *redis.Client, prefix string) *Store { return &Store{rdb: rdb, prefix: prefix} }

func (s *Store) key(purpose, tokenHash string) string {
	return s.prefix + "challenge:" + purpose + ":" + tokenHash
}

// Put stores c under its token hash for ttl.
func (s *Store) Put(ctx context.Context, c auth.Challenge, ttl time.Duration) error {
	k := s.key(c.Purpose, c.TokenHash)
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, k, "user_id", c.UserID, "tenant_id", c.TenantID, "target", c.Target, "code_hash", c.CodeHash,
			"extra", c.Extra, "attempts", 0)
		p.PExpire(ctx, k, ttl)
		return nil
	})
	if err != nil {
		return unavailable("put", err)
	}
	return nil
}

// consumeScript checks the code hash and deletes the challenge when it matches. KEYS: the
// challenge. ARGV: code hash, maximum attempts. It answers "missing", "wrong" (the challenge is
// deleted at the last allowed attempt) or the challenge's fields.
var consumeScript = redis.NewScript(`
local stored = redis.call('HGET', KEYS[1], 'code_hash')
if not stored then return 'missing' end
if stored ~= ARGV[1] then
  local n = redis.call('HINCRBY', KEYS[1], 'attempts', 1)
  if n >= tonumber(ARGV[2]) then redis.call('DEL', KEYS[1]) end
  return 'wrong'
end
local all = redis.call('HGETALL', KEYS[1])
redis.call('DEL', KEYS[1])
return all
`)

// Consume implements auth.Challenges: it returns the challenge and deletes it when codeHash
// matches; apperr NotFound when there is no such challenge (unknown, expired, used or burnt by
// wrong codes) and Invalid (code wrong_code) for a wrong code.
func (s *Store) Consume(ctx context.Context, purpose, tokenHash, codeHash string, maxAttempts int) (*auth.Challenge, error) {
	res, err := consumeScript.Run(ctx, s.rdb, []string{s.key(purpose, tokenHash)}, codeHash, maxAttempts).Result()
	if err != nil {
		return nil, unavailable("consume", err)
	}
	switch v := res.(type) {
	case string:
		if v == "wrong" {
			return nil, check.Field("wrong_code", "The code is not correct.", "code", "is not correct")
		}
		return nil, apperr.E(apperr.NotFound, "challenge_not_found", "The token is unknown, expired or already used.")
	case []any:
		m := map[string]string{}
		for i := 0; i+1 < len(v); i += 2 {
			k, _ := v[i].(string)
			val, _ := v[i+1].(string)
			m[k] = val
		}
		return fromHash(purpose, tokenHash, m), nil
	default:
		return nil, fmt.Errorf("challenge: consume: unexpected answer %T", res)
	}
}

func fromHash(purpose, tokenHash string, m map[string]string) *auth.Challenge {
	return &auth.Challenge{
		Purpose: purpose, TokenHash: tokenHash, UserID: m["user_id"], TenantID: m["tenant_id"],
		Target: m["target"], CodeHash: m["code_hash"], Extra: m["extra"],
	}
}

// Peek returns a challenge without using it; apperr NotFound when there is none.
func (s *Store) Peek(ctx context.Context, purpose, tokenHash string) (*auth.Challenge, error) {
	m, err := s.rdb.HGetAll(ctx, s.key(purpose, tokenHash)).Result()
	if err != nil {
		return nil, unavailable("peek", err)
	}
	if len(m) == 0 {
		return nil, apperr.E(apperr.NotFound, "challenge_not_found", "The token is unknown, expired or already used.")
	}
	return fromHash(purpose, tokenHash, m), nil
}

// failScript counts a wrong attempt and deletes the challenge at the last allowed one.
var failScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local n = redis.call('HINCRBY', KEYS[1], 'attempts', 1)
if n >= tonumber(ARGV[1]) then redis.call('DEL', KEYS[1]) end
return n
`)

// Fail counts a wrong attempt; the maxAttempts-th deletes the challenge.
func (s *Store) Fail(ctx context.Context, purpose, tokenHash string, maxAttempts int) error {
	if err := failScript.Run(ctx, s.rdb, []string{s.key(purpose, tokenHash)}, maxAttempts).Err(); err != nil {
		return unavailable("fail", err)
	}
	return nil
}

// Take deletes a challenge and reports whether this call deleted it, so of two concurrent
// callers exactly one succeeds.
func (s *Store) Take(ctx context.Context, purpose, tokenHash string) (bool, error) {
	n, err := s.rdb.Del(ctx, s.key(purpose, tokenHash)).Result()
	if err != nil {
		return false, unavailable("take", err)
	}
	return n == 1, nil
}

func unavailable(op string, err error) error {
	return apperr.Wrap(fmt.Errorf("challenge: %s: %w", op, err), apperr.Unavailable, "redis_unavailable", "The challenge store is unavailable.")
}
