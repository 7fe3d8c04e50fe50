/*
 * cert.c - certificates ("transferable public keys", RFC 9580 10.1) and secret keys:
 * splitting input into certificates, checking self-signatures, loading secrets.
 *
 * A certificate is kept as its public packets (secret packets are converted to their public
 * form, trust packets dropped). Only the primary key's own signatures count: third-party
 * certifications and signatures kiln cannot check are kept but ignored. A certificate is
 * accepted when at least one self-signature binds the primary key (a user ID certification
 * or a direct-key signature); the newest valid binding decides key flags and expiry, which
 * is what decides later whether the key may sign.
 */
#include "util/util.h"

#include "sign/sign_int.h"

/* Sequoia's standard policy: SHA-1 self-signatures are fine when made before 2023-02-01. */
#define SHA1_SELFSIG_CUTOFF 1675209600u

enum component { COMP_PRIMARY, COMP_UID, COMP_UATTR, COMP_SUBKEY };

struct cert_walk {
	struct sign_key *key;
	enum component comp;
	struct sign_uid *uid;
	struct sign_pubkey *sub;
	char why[128]; /* the last reason a self-signature was not accepted */
};

struct sign_key *sign_key_alloc(void)
{
	struct sign_key *key = kiln_calloc(1, sizeof(*key));

	if (key)
		kiln_buf_init(&key->cert, KILN_LIMIT_PGP_FILE);
	return key;
}

void sign_key_free(struct sign_key *key)
{
	size_t i;

	if (!key)
		return;
	sign_pubkey_release(&key->primary);
	for (i = 0; i < key->nsubkeys; i++)
		sign_pubkey_release(&key->subkeys[i]);
	free(key->subkeys);
	free(key->uids);
	free(key->uid);
	kiln_buf_release(&key->cert);
	free(key);
}

static bool issued_by(const struct sign_sig *sig, const struct sign_pubkey *k)
{
	if (sig->issuer_fpr_len)
		return sig->issuer_fpr_len == k->fpr_len &&
		       !memcmp(sig->issuer_fpr, k->fpr, k->fpr_len);
	if (sig->has_issuer)
		return !memcmp(sig->issuer, k->keyid, 8);
	return true; /* no issuer at all: try the primary key */
}

static bool reject(struct cert_walk *w, const char *why)
{
	sign_strlcpy(w->why, why, sizeof(w->why));
	return false;
}

/* The checks every self-signature must pass before its cryptography is looked at. */
static bool selfsig_acceptable(struct cert_walk *w, const struct sign_sig *sig,
                               const struct sign_pubkey *k)
{
	if (!sig->has_created)
		return reject(w, "a self-signature has no creation time");
	if (sig->critical_unknown)
		return reject(w, "a self-signature has an unknown critical subpacket");
	if (sig->created < k->created)
		return reject(w, "a self-signature is older than its key");
	if (!sign_hash_strong(sig->hash_algo) &&
	    !(sig->hash_algo == SIGN_HASH_SHA1 && sig->created < SHA1_SELFSIG_CUTOFF))
		return reject(w, "a self-signature uses a weak digest");
	return true;
}

/* Verify sig by signer over: primary key, then a user ID or a subkey (either may be NULL). */
static bool sig_verifies(struct cert_walk *w, const struct sign_sig *sig,
                         const struct sign_pubkey *signer, const struct sign_uid *uid,
                         const struct sign_pubkey *sub)
{
	struct util_digest d = {0};
	enum util_digest_algo algo;
	struct kiln_err e = KILN_ERR_INIT;
	bool ok = false;

	if (sign_hash_to_util(sig->hash_algo, &algo, &e) || util_digest_init(&d, algo, &e))
		return reject(w, "a self-signature uses an unsupported digest");
	sign_hash_key(&d, &w->key->primary);
	if (uid)
		sign_hash_uid(&d, uid->data, uid->len);
	if (sub)
		sign_hash_key(&d, sub);
	ok = sign_sig_check(sig, signer, &d, &e) == KILN_OK;
	if (!ok)
		reject(w, e.msg[0] ? e.msg : "a self-signature does not verify");
	util_digest_release(&d);
	return ok;
}

/* Take key flags and expiry from a binding signature when it is the newest so far. */
static void bind(struct sign_pubkey *k, const struct sign_sig *sig)
{
	if (k->bound && sig->created < k->bound_time)
		return;
	k->bound = true;
	k->bound_time = sig->created;
	k->has_flags = sig->has_flags;
	k->flags = sig->flags;
	k->expires = sig->has_key_expires ? sig->key_expires : 0;
}

/* A signing subkey must carry a primary-key binding signature made by itself, so nobody can
 * claim someone else's signing key as a subkey (RFC 9580 5.2.1.9). */
static bool backsig_ok(struct cert_walk *w, const struct sign_sig *binding, struct sign_pubkey *sub)
{
	struct sign_sig back;

	if (!binding->has_flags || !(binding->flags & SIGN_KEYFLAG_SIGN))
		return true;
	if (!binding->embedded ||
	    sign_sig_parse(binding->embedded, binding->embedded_len, &back, NULL) ||
	    back.type != SIGN_SIG_PRIMARY_BINDING)
		return reject(w, "a signing subkey has no primary-key binding signature");
	return selfsig_acceptable(w, &back, sub) && sig_verifies(w, &back, sub, NULL, sub);
}

static void sig_on_uid(struct cert_walk *w, const struct sign_sig *sig)
{
	struct sign_key *key = w->key;

	if (sig->type >= SIGN_SIG_CERT_GENERIC && sig->type <= SIGN_SIG_CERT_POSITIVE) {
		if (!sig_verifies(w, sig, &key->primary, w->uid, NULL))
			return;
		if (!w->uid->valid || sig->created >= w->uid->sig_time) {
			w->uid->valid = true;
			w->uid->sig_time = sig->created;
			w->uid->primary = sig->primary_uid;
		}
		bind(&key->primary, sig);
	} else if (sig->type == SIGN_SIG_CERT_REVOCATION &&
	           sig_verifies(w, sig, &key->primary, w->uid, NULL)) {
		w->uid->valid = false;
		w->uid->sig_time = UINT32_MAX; /* no later certification revives it */
	}
}

static void sig_on_primary(struct cert_walk *w, const struct sign_sig *sig)
{
	struct sign_pubkey *p = &w->key->primary;

	if (sig->type == SIGN_SIG_DIRECT_KEY && sig_verifies(w, sig, p, NULL, NULL))
		bind(p, sig);
	else if (sig->type == SIGN_SIG_KEY_REVOCATION && sig_verifies(w, sig, p, NULL, NULL))
		p->revoked = true;
}

static void sig_on_subkey(struct cert_walk *w, const struct sign_sig *sig)
{
	struct sign_pubkey *p = &w->key->primary;

	if (sig->type == SIGN_SIG_SUBKEY_BINDING && sig_verifies(w, sig, p, NULL, w->sub) &&
	    backsig_ok(w, sig, w->sub))
		bind(w->sub, sig);
	else if (sig->type == SIGN_SIG_SUBKEY_REVOCATION && sig_verifies(w, sig, p, NULL, w->sub))
		w->sub->revoked = true;
}

static void sig_apply(struct cert_walk *w, const struct sign_pkt *pkt)
{
	struct sign_sig sig;

	if (sign_sig_parse(pkt->body, pkt->len, &sig, NULL))
		return; /* a signature kiln cannot read (v3, other algorithms) binds nothing */
	if (!issued_by(&sig, &w->key->primary) || !selfsig_acceptable(w, &sig, &w->key->primary))
		return;
	if (w->comp == COMP_UID)
		sig_on_uid(w, &sig);
	else if (w->comp == COMP_PRIMARY)
		sig_on_primary(w, &sig);
	else if (w->comp == COMP_SUBKEY)
		sig_on_subkey(w, &sig);
}

/* Count user IDs and subkeys so the arrays are allocated once. */
static kiln_rc cert_count(struct sign_key *key, struct kiln_err *err)
{
	struct sign_pkt_reader r;
	struct sign_pkt pkt;
	size_t uids = 0;
	size_t subs = 0;
	kiln_rc rc;

	sign_pkt_reader_init(&r, key->cert.ptr, key->cert.len);
	while ((rc = sign_pkt_next(&r, &pkt, err)) == KILN_OK) {
		uids += pkt.tag == SIGN_TAG_USER_ID;
		subs += pkt.tag == SIGN_TAG_PUBLIC_SUBKEY;
	}
	if (rc != KILN_ENOTFOUND)
		return rc;
	key->uids = kiln_calloc(uids ? uids : 1, sizeof(*key->uids));
	key->subkeys = kiln_calloc(subs ? subs : 1, sizeof(*key->subkeys));
	if (!key->uids || !key->subkeys)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	return KILN_OK;
}

static kiln_rc cert_packet(struct cert_walk *w, const struct sign_pkt *pkt, struct kiln_err *err)
{
	struct sign_key *key = w->key;
	size_t pub_len;
	kiln_rc rc;

	switch (pkt->tag) {
	case SIGN_TAG_SIGNATURE:
		sig_apply(w, pkt);
		return KILN_OK;
	case SIGN_TAG_USER_ID:
		w->uid = &key->uids[key->nuids++];
		w->uid->data = pkt->body;
		w->uid->len = pkt->len;
		w->comp = COMP_UID;
		return KILN_OK;
	case SIGN_TAG_USER_ATTRIBUTE:
		w->comp = COMP_UATTR;
		return KILN_OK;
	case SIGN_TAG_PUBLIC_SUBKEY:
		w->sub = &key->subkeys[key->nsubkeys];
		w->comp = COMP_SUBKEY;
		rc = sign_pubkey_parse(pkt->body, pkt->len, false, w->sub, &pub_len, NULL);
		if (rc == KILN_EUNSUPP) {
			/* A subkey of a version or algorithm kiln does not know: keep it in the
			 * certificate, never use it, ignore its signatures. */
			memset(w->sub, 0, sizeof(*w->sub));
			w->comp = COMP_UATTR;
			return KILN_OK;
		}
		if (rc)
			return sign_pubkey_parse(pkt->body, pkt->len, false, w->sub, &pub_len, err);
		key->nsubkeys++;
		return KILN_OK;
	case SIGN_TAG_PUBLIC_KEY:
		return kiln_err_set(err, KILN_EFORMAT, "two primary keys in one certificate");
	default:
		return KILN_OK; /* other packets (marker, unknown) carry nothing kiln needs */
	}
}

static kiln_rc primary_uid(struct sign_key *key, struct kiln_err *err)
{
	const struct sign_uid *pick = NULL;
	size_t i;

	for (i = 0; i < key->nuids; i++) {
		const struct sign_uid *u = &key->uids[i];

		if (u->valid && (!pick || (u->primary && !pick->primary)))
			pick = u;
	}
	key->uid = pick ? kiln_strndup((const char *)pick->data, pick->len) : kiln_strdup("");
	if (!key->uid)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	return KILN_OK;
}

/* Parse key->cert (public packets of exactly one certificate) and check its signatures. */
static kiln_rc cert_parse(struct sign_key *key, struct kiln_err *err)
{
	struct cert_walk w = {.key = key, .comp = COMP_PRIMARY};
	struct sign_pkt_reader r;
	struct sign_pkt pkt;
	size_t pub_len;
	kiln_rc rc;

	rc = cert_count(key, err);
	if (rc)
		return rc;
	sign_pkt_reader_init(&r, key->cert.ptr, key->cert.len);
	rc = sign_pkt_next(&r, &pkt, err);
	if (!rc && pkt.tag != SIGN_TAG_PUBLIC_KEY)
		rc = kiln_err_set(err, KILN_EFORMAT, "a certificate must start with a public key");
	if (!rc)
		rc = sign_pubkey_parse(pkt.body, pkt.len, false, &key->primary, &pub_len, err);
	while (!rc && (rc = sign_pkt_next(&r, &pkt, err)) == KILN_OK)
		rc = cert_packet(&w, &pkt, err);
	if (rc != KILN_ENOTFOUND)
		return rc;
	if (!key->primary.bound)
		return kiln_err_set(err, KILN_ESIG, "certificate has no valid self-signature%s%s",
		                    w.why[0] ? ": " : "", w.why);
	return primary_uid(key, err);
}

/* ---------------------------------------------------------------------------------------- */
/* From packets to a struct sign_key */

/* Secret key packets of the certificate being built, borrowed from the input: [0] is the
 * primary, [i + 1] subkey i. */
struct secrets {
	const struct sign_pkt *pkt;
	size_t n;
};

/* Copy one packet into the public certificate; a secret key packet becomes its public
 * form (the same body up to the end of the public material). */
static kiln_rc copy_public(struct sign_key *key, const struct sign_pkt *pkt, bool *dropping,
                           struct kiln_err *err)
{
	struct sign_pubkey tmp;
	size_t pub_len = 0;
	kiln_rc rc;

	if (pkt->tag == SIGN_TAG_TRUST || pkt->tag == SIGN_TAG_MARKER)
		return KILN_OK;
	/* The signatures that follow a dropped subkey are its bindings: drop them too. */
	if (pkt->tag == SIGN_TAG_SIGNATURE && *dropping)
		return KILN_OK;
	*dropping = false;
	if (pkt->tag != SIGN_TAG_SECRET_KEY && pkt->tag != SIGN_TAG_SECRET_SUBKEY) {
		kiln_buf_add(&key->cert, pkt->raw, pkt->raw_len);
		return KILN_OK;
	}
	/* Parse as public, only to find where the public part ends. */
	rc = sign_pubkey_parse(pkt->body, pkt->len, false, &tmp, &pub_len, NULL);
	sign_pubkey_release(&tmp);
	if (rc == KILN_EFORMAT && pub_len)
		rc = KILN_OK; /* "stray bytes": the secret part */
	if (rc == KILN_EUNSUPP && pkt->tag == SIGN_TAG_SECRET_SUBKEY) {
		*dropping = true; /* cannot even find its public part: drop the subkey */
		return KILN_OK;
	}
	if (rc)
		return sign_pubkey_parse(pkt->body, pkt->len, true, &tmp, &pub_len, err);
	sign_pkt_write(&key->cert,
	               pkt->tag == SIGN_TAG_SECRET_KEY ? SIGN_TAG_PUBLIC_KEY
	                                               : SIGN_TAG_PUBLIC_SUBKEY,
	               pkt->body, pub_len);
	return KILN_OK;
}

/* Load the secret of (sub)key k from its secret packet. */
static kiln_rc load_secret(struct sign_pubkey *k, const struct sign_pkt *pkt, struct kiln_err *err)
{
	struct sign_pubkey s;
	size_t pub_len;
	kiln_rc rc;

	rc = sign_pubkey_parse(pkt->body, pkt->len, true, &s, &pub_len, err);
	if (rc)
		return rc;
	if (pub_len != k->body_len || memcmp(pkt->body, k->body, pub_len) != 0) {
		sign_pubkey_release(&s);
		return kiln_err_set(err, KILN_EFORMAT, "secret key packet does not match its key");
	}
	k->secret_protected = s.secret_protected;
	if (s.has_secret) {
		sign_ossl_free(k->pkey);
		k->pkey = s.pkey;
		k->has_secret = true;
		s.pkey = NULL;
	}
	sign_pubkey_release(&s);
	return KILN_OK;
}

static kiln_rc load_secrets(struct sign_key *key, const struct secrets *sec, struct kiln_err *err)
{
	const struct sign_pkt *pkt = sec->pkt;
	size_t i;
	size_t j;
	kiln_rc rc = KILN_OK;

	for (i = 0; !rc && i < sec->n; i++) {
		if (pkt[i].tag == SIGN_TAG_SECRET_KEY) {
			rc = load_secret(&key->primary, &pkt[i], err);
			continue;
		}
		/* A secret subkey starts with its public body; subkeys kiln dropped or keeps
		 * unused simply have no match. */
		for (j = 0; j < key->nsubkeys; j++) {
			const struct sign_pubkey *s = &key->subkeys[j];

			if (s->body_len <= pkt[i].len && !memcmp(s->body, pkt[i].body, s->body_len))
				break;
		}
		if (j < key->nsubkeys)
			rc = load_secret(&key->subkeys[j], &pkt[i], err);
	}
	return rc;
}

/* Build one key from the packets [first, first + n) of the input. */
static kiln_rc key_build(const struct sign_pkt *pkts, size_t n, struct sign_key **out,
                         struct kiln_err *err)
{
	struct sign_key *key = sign_key_alloc();
	struct sign_pkt *sec = NULL;
	struct secrets s = {0};
	bool dropping = false;
	size_t i;
	kiln_rc rc = KILN_OK;

	if (!key || !(sec = kiln_calloc(n, sizeof(*sec)))) {
		rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; !rc && i < n; i++) {
		rc = copy_public(key, &pkts[i], &dropping, err);
		if (pkts[i].tag == SIGN_TAG_SECRET_KEY || pkts[i].tag == SIGN_TAG_SECRET_SUBKEY)
			sec[s.n++] = pkts[i];
	}
	if (!rc)
		rc = kiln_buf_finish(&key->cert, err);
	if (!rc)
		rc = cert_parse(key, err);
	s.pkt = sec;
	if (!rc)
		rc = load_secrets(key, &s, err);
	if (!rc) {
		*out = key;
		key = NULL;
	}
out:
	free(sec);
	sign_key_free(key);
	return rc;
}

static bool is_primary_tag(unsigned tag)
{
	return tag == SIGN_TAG_PUBLIC_KEY || tag == SIGN_TAG_SECRET_KEY;
}

struct walk {
	sign_key_fn fn;
	void *ctx;
	size_t keys;
};

/* The tag of the packet at the cursor, without consuming it; 0 if there is none. */
static unsigned peek_tag(const struct sign_cur *c)
{
	uint8_t ctb;

	if (!sign_cur_left(c))
		return 0;
	ctb = c->p[c->off];
	return ctb & 0x40 ? ctb & 0x3fu : (ctb >> 2) & 0x0fu;
}

/* Split binary packets into certificates, each starting at a primary key packet. */
static kiln_rc walk_binary(struct walk *wk, const uint8_t *data, size_t len, struct kiln_err *err)
{
	struct sign_pkt_reader r;
	struct sign_pkt *pkts = NULL;
	struct sign_key *key = NULL;
	size_t n = 0;
	kiln_rc rc;

	pkts = kiln_calloc(KILN_LIMIT_PGP_PACKETS, sizeof(*pkts));
	if (!pkts)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	sign_pkt_reader_init(&r, data, len);
	while ((rc = sign_pkt_next(&r, &pkts[n], err)) == KILN_OK) {
		if (pkts[n].tag == SIGN_TAG_MARKER && !n)
			continue;
		if (!n && !is_primary_tag(pkts[n].tag)) {
			rc = kiln_err_set(
			    err, KILN_EFORMAT,
			    "expected a key packet at offset %zu, found packet type %u",
			    pkts[n].off, pkts[n].tag);
			break;
		}
		n++;
		/* The certificate ends before the next primary key or at the end. */
		if (sign_cur_left(&r.cur) && !is_primary_tag(peek_tag(&r.cur)))
			continue;
		if (++wk->keys > KILN_LIMIT_PGP_KEYS) {
			rc = kiln_err_set(err, KILN_ELIMIT, "more than %d keys",
			                  KILN_LIMIT_PGP_KEYS);
			break;
		}
		rc = key_build(pkts, n, &key, err);
		if (rc) {
			kiln_err_wrap(err, "key at offset %zu", pkts[0].off);
			break;
		}
		rc = wk->fn(wk->ctx, key, err);
		key = NULL;
		n = 0;
		r.count = 0; /* the packet limit is per certificate */
		if (rc)
			break;
	}
	free(pkts);
	return rc == KILN_ENOTFOUND ? KILN_OK : rc;
}

static kiln_rc walk_armor(struct walk *wk, const char *text, size_t len, struct kiln_err *err)
{
	struct kiln_buf bin = KILN_BUF_INIT(KILN_LIMIT_PGP_FILE);
	enum sign_armor_type type;
	size_t off = 0;
	size_t used = 0;
	size_t blocks = 0;
	kiln_rc rc = KILN_OK;

	while (!rc && off < len) {
		sign_buf_wipe(&bin);
		rc = sign_armor_decode(text + off, len - off, &type, &used, &bin, err);
		if (rc == KILN_ENOTFOUND) {
			rc = blocks
			         ? KILN_OK
			         : kiln_err_set(err, KILN_EFORMAT, "no OpenPGP armor block found");
			break;
		}
		if (!rc && type != SIGN_ARMOR_PUBLIC_KEY && type != SIGN_ARMOR_PRIVATE_KEY)
			rc = kiln_err_set(err, KILN_EFORMAT, "armor block is not a key block");
		if (!rc)
			rc = walk_binary(wk, (const uint8_t *)bin.ptr, bin.len, err);
		off += used;
		blocks++;
	}
	/* The decoded block may have been a secret key. */
	sign_buf_wipe(&bin);
	return rc;
}

kiln_rc sign_keys_from_mem(const void *data, size_t len, sign_key_fn fn, void *ctx,
                           struct kiln_err *err)
{
	struct walk wk = {.fn = fn, .ctx = ctx};
	kiln_rc rc;

	if (len > KILN_LIMIT_PGP_FILE)
		return kiln_err_set(err, KILN_ELIMIT, "key data of %zu bytes exceeds the limit",
		                    len);
	if (sign_armor_detect(data, len))
		rc = walk_armor(&wk, data, len, err);
	else
		rc = walk_binary(&wk, data, len, err);
	if (!rc && !wk.keys)
		rc = kiln_err_set(err, KILN_EFORMAT, "no OpenPGP key found");
	return rc;
}

struct first {
	struct sign_key *key;
};

static kiln_rc keep_first(void *ctx, struct sign_key *key, struct kiln_err *err)
{
	struct first *f = ctx;

	(void)err;
	if (f->key) {
		sign_key_free(key);
		return KILN_OK;
	}
	f->key = key;
	return KILN_OK;
}

kiln_rc sign_key_from_mem(const void *data, size_t len, struct sign_key **out, struct kiln_err *err)
{
	struct first f = {0};
	kiln_rc rc;

	*out = NULL;
	rc = sign_keys_from_mem(data, len, keep_first, &f, err);
	if (rc) {
		sign_key_free(f.key);
		return rc;
	}
	*out = f.key;
	return KILN_OK;
}
