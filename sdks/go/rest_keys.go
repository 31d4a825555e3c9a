package relay

import "context"

// APIKey is a gateway key as the portal lists it (never the secret itself).
type APIKey struct {
	ID            string   `json:"id"`
	OrgID         string   `json:"org_id"`
	KeyPrefix     string   `json:"key_prefix"`
	Name          *string  `json:"name"`
	Tier          string   `json:"tier"`
	Permissions   []string `json:"permissions"`
	Models        []string `json:"models"`
	Status        string   `json:"status"` // active, revoked, rotated
	RotationDays  *int     `json:"rotation_days"`
	RotationDue   bool     `json:"rotation_due"`
	RotationDueAt *string  `json:"rotation_due_at"`
	ReplacedBy    *string  `json:"replaced_by"`
	CreatedAt     string   `json:"created_at"`
	LastUsedAt    *string  `json:"last_used_at"`
	RevokedAt     *string  `json:"revoked_at"`
}

// IssuedKey is a key just created or rotated: APIKey is the secret, shown this once.
type IssuedKey struct {
	ID           string   `json:"id"`
	APIKey       string   `json:"api_key"`
	KeyPrefix    string   `json:"key_prefix"`
	Name         *string  `json:"name"`
	Tier         string   `json:"tier"`
	Permissions  []string `json:"permissions"`
	Models       []string `json:"models"`
	OrgID        string   `json:"org_id"`
	RotationDays *int     `json:"rotation_days"`
	// Replaces is the id of the key a rotation replaced.
	Replaces string `json:"replaces,omitempty"`
	Warning  string `json:"warning"`
}

// KeyParams creates or changes a key; a nil field is left out (on Update: unchanged). Permissions are scopes
// (messages, completions, buffer); empty means fully permissive. Models is an allowlist.
type KeyParams struct {
	Name         *string  `json:"name,omitempty"`
	Permissions  []string `json:"permissions,omitempty"`
	Models       []string `json:"models,omitempty"`
	RotationDays *int     `json:"rotation_days,omitempty"`
	// OrgID (Create only) issues the key in another organisation the token may manage.
	OrgID string `json:"org_id,omitempty"`
}

// KeysService is client.Keys: the organisation's gateway keys (portal token with ability:keys.read / keys.write).
type KeysService struct{ c *Client }

// Create issues a key.
func (s *KeysService) Create(ctx context.Context, p KeyParams, opts ...CallOptions) (*IssuedKey, error) {
	return call[IssuedKey](ctx, s.c, "POST", "/api/keys", AuthPortal, p, opts)
}

// List lists the keys of the token's organisation (orgID "": its own).
func (s *KeysService) List(ctx context.Context, orgID string, opts ...CallOptions) ([]APIKey, error) {
	var out struct {
		Keys []APIKey `json:"keys"`
	}
	if err := s.c.Do(ctx, "GET", "/api/v1/keys"+query("org_id", orgID), AuthPortal, nil, &out, opts...); err != nil {
		return nil, err
	}
	return out.Keys, nil
}

// Update changes a key's name, permissions, models or rotation period.
func (s *KeysService) Update(ctx context.Context, id string, p KeyParams, opts ...CallOptions) (*APIKey, error) {
	p.OrgID = ""
	return call[APIKey](ctx, s.c, "PATCH", "/api/keys/"+pathEscape(id), AuthPortal, p, opts)
}

// Rotate issues a successor key (IssuedKey.Replaces is id); the old key is marked rotated.
func (s *KeysService) Rotate(ctx context.Context, id string, opts ...CallOptions) (*IssuedKey, error) {
	return call[IssuedKey](ctx, s.c, "POST", "/api/keys/"+pathEscape(id)+"/rotate", AuthPortal, map[string]any{}, opts)
}

// Revoke revokes a key at once.
func (s *KeysService) Revoke(ctx context.Context, id string, opts ...CallOptions) (*APIKey, error) {
	return call[APIKey](ctx, s.c, "POST", "/api/keys/"+pathEscape(id)+"/revoke", AuthPortal, map[string]any{}, opts)
}
