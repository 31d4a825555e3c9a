package relay

import "context"

// Balance is a prepaid wallet balance (micro-dollars and the same as a decimal string).
type Balance struct {
	OrgID         string `json:"org_id,omitempty"`
	BalanceMicros int64  `json:"balance_micros"`
	BalanceUSD    string `json:"balance_usd"`
}

// Checkout is a top-up checkout: send the user to CheckoutURL.
type Checkout struct {
	CheckoutID   string `json:"checkout_id"`
	CheckoutURL  string `json:"checkout_url"`
	AmountMicros int64  `json:"amount_micros"`
	AmountUSD    string `json:"amount_usd"`
	Status       string `json:"status"`
	Provider     string `json:"provider"`
	Credited     bool   `json:"credited,omitempty"`
}

// Redemption is a redeemed licence code and the balance after it.
type Redemption struct {
	LicenceID     string `json:"licence_id"`
	AmountMicros  int64  `json:"amount_micros"`
	AmountUSD     string `json:"amount_usd"`
	BalanceMicros int64  `json:"balance_micros"`
	BalanceUSD    string `json:"balance_usd"`
}

// LedgerEntry is one credit or debit of the wallet.
type LedgerEntry struct {
	ID           string  `json:"id"`
	Kind         string  `json:"kind"`
	AmountMicros int64   `json:"amount_micros"`
	AmountUSD    string  `json:"amount_usd"`
	Reference    *string `json:"reference"`
	UsageID      *string `json:"usage_id"`
	CreatedAt    string  `json:"created_at"`
}

// LedgerPage is one page of the ledger; NextCursor is nil on the last page.
type LedgerPage struct {
	Entries    []LedgerEntry `json:"entries"`
	NextCursor *string       `json:"next_cursor"`
}

// Usage is the organisation's metered usage: a daily summary, failures, and the records of one page.
type Usage struct {
	OrgID   string `json:"org_id"`
	From    string `json:"from"`
	To      string `json:"to"`
	Summary []struct {
		Day          string `json:"day"`
		Provider     string `json:"provider"`
		Model        string `json:"model"`
		Calls        int64  `json:"calls"`
		InputTokens  int64  `json:"input_tokens"`
		OutputTokens int64  `json:"output_tokens"`
		BilledMicros int64  `json:"billed_micros"`
		BilledUSD    string `json:"billed_usd"`
	} `json:"summary"`
	Failures []struct {
		Day       string `json:"day"`
		Status    int    `json:"status"`
		ErrorCode string `json:"error_code"`
		Calls     int64  `json:"calls"`
	} `json:"failures"`
	Records []struct {
		ID                 string  `json:"id"`
		RequestID          string  `json:"request_id"`
		KeyID              string  `json:"key_id"`
		Provider           string  `json:"provider"`
		Model              string  `json:"model"`
		Capability         string  `json:"capability"`
		KeyMode            string  `json:"key_mode"`
		InputTokens        int64   `json:"input_tokens"`
		OutputTokens       int64   `json:"output_tokens"`
		BilledMicros       int64   `json:"billed_micros"`
		BilledUSD          string  `json:"billed_usd"`
		UpstreamCostMicros int64   `json:"upstream_cost_micros"`
		MarkupMicros       int64   `json:"markup_micros"`
		Estimated          bool    `json:"estimated"`
		Partial            bool    `json:"partial"`
		ReceiptJti         *string `json:"receipt_jti"`
		FinishedAt         string  `json:"finished_at"`
	} `json:"records"`
	NextCursor *string `json:"next_cursor"`
}

// PageParams pages a list (and, for usage, bounds it: From/To ISO 8601).
type PageParams struct {
	Limit  int
	Cursor string
	From   string
	To     string
}

func (p PageParams) query() string {
	return query("limit", p.Limit, "cursor", p.Cursor, "from", p.From, "to", p.To)
}

// BillingService is client.Billing: the organisation's wallet (portal token with ability:billing.read / write).
type BillingService struct{ c *Client }

// Balance answers the wallet balance.
func (s *BillingService) Balance(ctx context.Context, opts ...CallOptions) (*Balance, error) {
	return call[Balance](ctx, s.c, "GET", "/api/v1/billing/balance", AuthPortal, nil, opts)
}

// TopUp opens a checkout for amountUSD (a decimal string such as "25.00").
func (s *BillingService) TopUp(ctx context.Context, amountUSD string, opts ...CallOptions) (*Checkout, error) {
	return call[Checkout](ctx, s.c, "POST", "/api/v1/billing/topup", AuthPortal, map[string]any{"amount_usd": amountUSD}, opts)
}

// CompleteDevCheckout completes a checkout of the dev payments provider (PAYMENTS_PROVIDER=dev; tests and demos).
func (s *BillingService) CompleteDevCheckout(ctx context.Context, checkoutID string, opts ...CallOptions) (*Checkout, error) {
	return call[Checkout](ctx, s.c, "POST", "/api/v1/billing/dev/checkouts/"+pathEscape(checkoutID)+"/complete", AuthPortal, map[string]any{}, opts)
}

// RedeemLicence credits the wallet with a licence code.
func (s *BillingService) RedeemLicence(ctx context.Context, code string, opts ...CallOptions) (*Redemption, error) {
	return call[Redemption](ctx, s.c, "POST", "/api/v1/billing/redeem-license", AuthPortal, map[string]any{"code": code}, opts)
}

// Ledger answers a page of the wallet's ledger (From/To are ignored).
func (s *BillingService) Ledger(ctx context.Context, p PageParams, opts ...CallOptions) (*LedgerPage, error) {
	return call[LedgerPage](ctx, s.c, "GET", "/api/v1/billing/ledger"+query("limit", p.Limit, "cursor", p.Cursor), AuthPortal, nil, opts)
}

// Usage answers the organisation's usage.
func (s *BillingService) Usage(ctx context.Context, p PageParams, opts ...CallOptions) (*Usage, error) {
	return call[Usage](ctx, s.c, "GET", "/api/v1/billing/usage"+p.query(), AuthPortal, nil, opts)
}

// KeyInfo is what the gateway key knows about itself.
type KeyInfo struct {
	KeyPrefix   string   `json:"key_prefix"`
	OrgID       string   `json:"org_id"`
	Tier        string   `json:"tier"`
	Permissions []string `json:"permissions"`
	Models      []string `json:"models"`
	ExpiresAt   *string  `json:"expires_at"`
}

// SelfOrgService is client.Self: the gateway key's own organisation, read with the key itself (no portal token).
type SelfOrgService struct{ c *Client }

// Balance answers the key's wallet balance.
func (s *SelfOrgService) Balance(ctx context.Context, opts ...CallOptions) (*Balance, error) {
	return call[Balance](ctx, s.c, "GET", "/api/v1/self/balance", AuthKey, nil, opts)
}

// Usage answers the key's organisation's usage.
func (s *SelfOrgService) Usage(ctx context.Context, p PageParams, opts ...CallOptions) (*Usage, error) {
	return call[Usage](ctx, s.c, "GET", "/api/v1/self/usage"+p.query(), AuthKey, nil, opts)
}

// Key answers the key's prefix, tier, permissions and models.
func (s *SelfOrgService) Key(ctx context.Context, opts ...CallOptions) (*KeyInfo, error) {
	return call[KeyInfo](ctx, s.c, "GET", "/api/v1/self/key", AuthKey, nil, opts)
}

// FreeKey is a self-service free-tier key: APIKey is shown this once.
type FreeKey struct {
	APIKey    string `json:"api_key"`
	KeyPrefix string `json:"key_prefix"`
	Tier      string `json:"tier"`
	Limits    struct {
		RateLimitRPM int    `json:"rate_limit_rpm"`
		OnDevice     string `json:"on_device"`
		Relay        string `json:"relay"`
	} `json:"limits"`
	Warning string `json:"warning"`
}

// SelfServiceKeyParams are the optional contact details of a self-service key.
type SelfServiceKeyParams struct {
	Email string `json:"email,omitempty"`
	Name  string `json:"name,omitempty"`
}

// CreateSelfServiceKey issues a free-tier key (no credential needed; the gateway rate-limits it per address).
func (c *Client) CreateSelfServiceKey(ctx context.Context, p SelfServiceKeyParams, opts ...CallOptions) (*FreeKey, error) {
	return call[FreeKey](ctx, c, "POST", "/api/v1/self-service/key", AuthNone, p, opts)
}
