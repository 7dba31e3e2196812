// Package redissession keeps login sessions and the SHA-256 hashes of their refresh tokens in Redis,
// implementing auth.SessionStore. Keys (all under the configured prefix):
//
//	session:<sid>          hash of the session's fields and its current refresh key; expires after
//	                       the refresh TTL, renewed on use
//	user-sessions:<uid>    sorted set of the user's session ids by issue time
//	refresh:<sha256>       hash {sid, rotated_at, next, sealed}; rotated_at is 0 until the token
//	                       is exchanged, then next names its successor's key and sealed holds the
//	                       successor encrypted under the token itself (see seal)
//	revoked-session:<sid>  marker that outlives every access token of a revoked session
//	tenant-not-before:<tid> Unix second before which the access tokens of a suspended or
//	                       cancelled tenant were issued; outlives every one of them
//
// Redis failures are apperr Unavailable.
package redissession

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/services/identity-svc/internal/auth"
	"github.com/motionstudio/platform/services/identity-svc/internal/tenant"
)

// Store implements auth.SessionStore over Redis.
type Store struct {
	rdb         *redis.Client
	prefix      string
	ttl         time.Duration
	revokedTTL  time.Duration
	revocations Revocations
}

// Revocations learns of every live session revoked, so the other services that verify its
// access tokens can refuse them too (identity.session.revoked.v1).
type Revocations interface {
	SessionRevoked(ctx context.Context, sessionID, userID, tenantID string, at time.Time) error
}

// NewStore returns a Store. ttl is the lifetime of an unused session and of every refresh token;
// revokedTTL is how long a revoked session id is remembered, at least the access-token lifetime;
// revocations (nil for none) is told of each live session revoked.
func NewStore(rdb *redis.Client, prefix string, ttl, revokedTTL time.Duration, revocations Revocations) *Store {
	return &Store{rdb: rdb, prefix: prefix, ttl: ttl, revokedTTL: revokedTTL, revocations: revocations}
}

func (s *Store) sessionKey(id string) string { return s.prefix + "session:" + id }
func (s *Store) userKey(id string) string    { return s.prefix + "user-sessions:" + id }
func (s *Store) refreshKey(h string) string  { return s.prefix + "refresh:" + h }
func (s *Store) revokedKey(id string) string { return s.prefix + "revoked-session:" + id }
func (s *Store) tenantKey(id string) string  { return s.prefix + "tenant-not-before:" + id }

func unavailable(op string, err error) error {
	return apperr.Wrap(fmt.Errorf("session: %s: %w", op, err), apperr.Unavailable, "redis_unavailable", "The session store is unavailable.")
}

func invalidRefresh() error {
	return apperr.E(apperr.Unauthenticated, "invalid_refresh_token", "The refresh token is not valid.")
}

// Create stores a session and its first refresh token hash.
func (s *Store) Create(ctx context.Context, sess auth.Session, refreshHash string) error {
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, s.sessionKey(sess.ID), map[string]any{
			"user_id": sess.UserID, "tenant_id": sess.TenantID, "device_id": sess.DeviceID,
			"device_name": sess.DeviceName, "user_agent": sess.UserAgent, "ip_address": sess.IPAddress,
			"issued_at": sess.IssuedAt.UnixMilli(), "last_used_at": sess.LastUsedAt.UnixMilli(),
		})
		p.PExpire(ctx, s.sessionKey(sess.ID), s.ttl)
		p.ZAdd(ctx, s.userKey(sess.UserID), redis.Z{Score: float64(sess.IssuedAt.UnixMilli()), Member: sess.ID})
		p.PExpire(ctx, s.userKey(sess.UserID), s.ttl)
		p.HSet(ctx, s.sessionKey(sess.ID), "current", s.refreshKey(refreshHash))
		p.HSet(ctx, s.refreshKey(refreshHash), "sid", sess.ID, "rotated_at", 0)
		p.PExpire(ctx, s.refreshKey(refreshHash), s.ttl)
		return nil
	})
	if err != nil {
		return unavailable("create", err)
	}
	return nil
}

// rotateScript exchanges a refresh token atomically in one round trip. KEYS: old token, new
// token. ARGV: key prefix, now (ms), grace (ms), ttl (ms), ip, user agent, the new token sealed
// under the old one. A session's current token is the only one that may be exchanged; a token
// rotated less than grace ago is answered its own successor again (a retry whose answer was
// lost) while that successor is still the session's current token, and anything else is reuse.
// It answers {status, sid, sealed successor, session fields...} with status "unknown" (no such
// token), "gone" (revoked or expired session), "reused", "ok" (rotated) or "retry".
var rotateScript = redis.NewScript(`
local sid = redis.call('HGET', KEYS[1], 'sid')
if not sid then return {'unknown'} end
local skey = ARGV[1] .. 'session:' .. sid
if redis.call('EXISTS', skey) == 0 then return {'gone', sid} end
local rotated = tonumber(redis.call('HGET', KEYS[1], 'rotated_at') or '0')
local out
if rotated > 0 then
  if tonumber(ARGV[2]) - rotated >= tonumber(ARGV[3]) then return {'reused', sid} end
  local nxt = redis.call('HGET', KEYS[1], 'next')
  if not nxt or redis.call('HGET', skey, 'current') ~= nxt then return {'reused', sid} end
  out = {'retry', sid, redis.call('HGET', KEYS[1], 'sealed') or ''}
else
  redis.call('HSET', KEYS[1], 'rotated_at', ARGV[2], 'next', KEYS[2], 'sealed', ARGV[7])
  redis.call('HSET', KEYS[2], 'sid', sid, 'rotated_at', '0')
  redis.call('PEXPIRE', KEYS[2], ARGV[4])
  redis.call('HSET', skey, 'current', KEYS[2])
  out = {'ok', sid, ''}
end
redis.call('HSET', skey, 'last_used_at', ARGV[2], 'ip_address', ARGV[5], 'user_agent', ARGV[6])
redis.call('PEXPIRE', skey, ARGV[4])
local fields = redis.call('HGETALL', skey)
for i = 1, #fields, 2 do
  if fields[i] == 'user_id' then redis.call('PEXPIRE', ARGV[1] .. 'user-sessions:' .. fields[i + 1], ARGV[4]) end
end
for _, v in ipairs(fields) do out[#out + 1] = v end
return out
`)

// Rotate implements auth.SessionStore. Only the session's current token is exchanged for next;
// the token it replaced, presented again less than grace later while its successor is still
// unused, is answered that same successor (an idempotent retry). Any other presentation of a
// replaced token is reuse: the session is revoked.
func (s *Store) Rotate(ctx context.Context, old, next string, grace time.Duration, use auth.Use) (*auth.Session, string, error) {
	sealed, err := seal(old, next)
	if err != nil {
		return nil, "", err
	}
	keys := []string{s.refreshKey(auth.HashToken(old)), s.refreshKey(auth.HashToken(next))}
	res, err := rotateScript.Run(ctx, s.rdb, keys, s.prefix, use.At.UnixMilli(), grace.Milliseconds(),
		s.ttl.Milliseconds(), use.IPAddress, use.UserAgent, sealed).StringSlice()
	if err != nil {
		return nil, "", unavailable("rotate", err)
	}
	switch res[0] {
	case "ok", "retry":
		issued := next
		if res[0] == "retry" {
			if issued, err = unseal(old, res[2]); err != nil {
				return nil, "", err
			}
		}
		m := make(map[string]string, (len(res)-3)/2)
		for i := 3; i+1 < len(res); i += 2 {
			m[res[i]] = res[i+1]
		}
		return fromHash(res[1], m), issued, nil
	case "reused":
		if err := s.Revoke(ctx, res[1]); err != nil {
			return nil, "", err
		}
		return nil, "", apperr.E(apperr.Unauthenticated, "refresh_token_reused",
			"The refresh token was already used; the session is revoked.")
	default:
		return nil, "", invalidRefresh()
	}
}

// Get returns a live session; apperr NotFound when it is revoked, expired or unknown.
func (s *Store) Get(ctx context.Context, id string) (*auth.Session, error) {
	m, err := s.rdb.HGetAll(ctx, s.sessionKey(id)).Result()
	if err != nil {
		return nil, unavailable("get", err)
	}
	if len(m) == 0 {
		return nil, apperr.E(apperr.NotFound, "session_not_found", "The session does not exist.")
	}
	return fromHash(id, m), nil
}

func fromHash(id string, m map[string]string) *auth.Session {
	ms := func(k string) time.Time {
		v, _ := strconv.ParseInt(m[k], 10, 64)
		return time.UnixMilli(v).UTC()
	}
	return &auth.Session{
		ID: id, UserID: m["user_id"], TenantID: m["tenant_id"], DeviceID: m["device_id"],
		DeviceName: m["device_name"], UserAgent: m["user_agent"], IPAddress: m["ip_address"],
		IssuedAt: ms("issued_at"), LastUsedAt: ms("last_used_at"),
	}
}

// List returns the user's live sessions and forgets the ids of expired ones.
func (s *Store) List(ctx context.Context, userID string) ([]auth.Session, error) {
	ids, err := s.rdb.ZRange(ctx, s.userKey(userID), 0, -1).Result()
	if err != nil {
		return nil, unavailable("list", err)
	}
	cmds := make([]*redis.MapStringStringCmd, len(ids))
	if _, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			cmds[i] = p.HGetAll(ctx, s.sessionKey(id))
		}
		return nil
	}); err != nil {
		return nil, unavailable("list", err)
	}
	out := make([]auth.Session, 0, len(ids))
	var gone []any
	for i, c := range cmds {
		if len(c.Val()) == 0 {
			gone = append(gone, ids[i])
			continue
		}
		out = append(out, *fromHash(ids[i], c.Val()))
	}
	if len(gone) > 0 {
		if err := s.rdb.ZRem(ctx, s.userKey(userID), gone...).Err(); err != nil {
			return nil, unavailable("list", err)
		}
	}
	return out, nil
}

// Revoke deletes the session and remembers its id as revoked, so its access tokens stop working
// and its refresh tokens are refused; a live session's revocation is first told to
// Revocations, whose error stops the revocation so that a retry tells it again. Revoking an
// unknown session only records the marker.
func (s *Store) Revoke(ctx context.Context, id string) error {
	owner, err := s.rdb.HMGet(ctx, s.sessionKey(id), "user_id", "tenant_id").Result()
	if err != nil {
		return unavailable("revoke", err)
	}
	userID, _ := owner[0].(string)
	tenantID, _ := owner[1].(string)
	if userID != "" && s.revocations != nil {
		if err := s.revocations.SessionRevoked(ctx, id, userID, tenantID, time.Now().UTC()); err != nil {
			return err
		}
	}
	_, err = s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, s.revokedKey(id), 1, s.revokedTTL)
		p.Del(ctx, s.sessionKey(id))
		if userID != "" {
			p.ZRem(ctx, s.userKey(userID), id)
		}
		return nil
	})
	if err != nil {
		return unavailable("revoke", err)
	}
	return nil
}

// RevokeOthers revokes every session of the user except keepID.
func (s *Store) RevokeOthers(ctx context.Context, userID, keepID string) error {
	ids, err := s.rdb.ZRange(ctx, s.userKey(userID), 0, -1).Result()
	if err != nil {
		return unavailable("revoke others", err)
	}
	for _, id := range ids {
		if id == keepID {
			continue
		}
		if err := s.Revoke(ctx, id); err != nil {
			return err
		}
	}
	return nil
}

// RevokeAll revokes every session of the user (a ban).
func (s *Store) RevokeAll(ctx context.Context, userID string) error {
	return s.RevokeOthers(ctx, userID, "")
}

// Revoked reports, in one round trip, whether an access token of the session, of the tenant
// and issued at issuedAt is refused: its session was revoked, or its tenant was suspended or
// cancelled after issuedAt (see TenantStatusSet). An empty tenantID checks only the session.
func (s *Store) Revoked(ctx context.Context, sessionID, tenantID string, issuedAt time.Time) (bool, error) {
	vals, err := s.rdb.MGet(ctx, s.revokedKey(sessionID), s.tenantKey(tenantID)).Result()
	if err != nil {
		return false, unavailable("check", err)
	}
	if vals[0] != nil {
		return true, nil
	}
	notBefore, _ := vals[1].(string)
	if tenantID == "" || notBefore == "" {
		return false, nil
	}
	sec, err := strconv.ParseInt(notBefore, 10, 64)
	if err != nil {
		return false, fmt.Errorf("session: tenant marker of %s: %w", tenantID, err)
	}
	return issuedAt.Unix() < sec, nil
}

// TenantStatusSet implements tenant.StatusHook: for a tenant whose TokensNotBefore is set it
// remembers that time, so that the tenant's access tokens issued before it are refused at once
// by this service, for as long as any of them can live. It keeps the marker through a
// reactivation, which restores no session.
func (s *Store) TenantStatusSet(ctx context.Context, t *tenant.Tenant) error {
	if t.TokensNotBefore == nil {
		return nil
	}
	ttl := time.Until(t.TokensNotBefore.Add(s.revokedTTL))
	if ttl <= 0 {
		return nil
	}
	if err := s.rdb.Set(ctx, s.tenantKey(t.ID), t.TokensNotBefore.Unix(), ttl).Err(); err != nil {
		return unavailable("mark tenant", err)
	}
	return nil
}
