package tracestore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/aws/smithy-go"
	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	// The URL schemes a bucketURL may use. Each driver takes its
	// credentials the way it documents: s3blob from the AWS SDK's default
	// chain (environment, shared config, instance or task role) or the
	// URL's profile/role parameters; gcsblob from Application Default
	// Credentials; azureblob from AZURE_STORAGE_* or DefaultAzureCredential.
	_ "gocloud.dev/blob/azureblob"
	_ "gocloud.dev/blob/fileblob"
	_ "gocloud.dev/blob/gcsblob"
	_ "gocloud.dev/blob/memblob"
	_ "gocloud.dev/blob/s3blob"
)

// BucketSchemes are the URL schemes OpenBucket accepts.
var BucketSchemes = []string{"s3", "gs", "azblob", "file", "mem"}

// DefaultBucketTimeout bounds each bucket operation, so that an endpoint
// that went away gives an error rather than a hang (the AWS SDK retries
// refused connections on its own).
const DefaultBucketTimeout = 30 * time.Second

// BucketOptions configure OpenBucket.
type BucketOptions struct {
	// Prefix keeps this store's objects apart from others in the bucket.
	Prefix string
	// AccessKeyID and SecretAccessKey are static S3 credentials (the
	// datasource's secure settings); empty means the SDK's default chain.
	// They never appear in messages.
	AccessKeyID, SecretAccessKey string
	// Timeout bounds each operation; 0 means DefaultBucketTimeout.
	Timeout time.Duration
}

// Bucket persists objects in a gocloud.dev blob bucket under a prefix.
type Bucket struct {
	b       *blob.Bucket
	prefix  string
	where   string   // the redacted URL, for messages
	raw     string   // the URL as configured: replaced by where in messages
	secrets []string // credentials: masked in every message
	timeout time.Duration
}

// CheckBucketURL tells whether raw is a bucket URL OpenBucket can open:
// a supported scheme and, for cloud schemes, a bucket name. It does not
// touch the network.
func CheckBucketURL(raw string) error {
	_, err := parseBucketURL(raw)
	return err
}

func parseBucketURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // without the URL, which may hold a token
		}
		return nil, fmt.Errorf("the bucket URL is not a valid URL (%v)", err)
	}
	if !slices.Contains(BucketSchemes, u.Scheme) {
		return nil, fmt.Errorf("the bucket URL scheme %q is not supported: use s3://, gs://, azblob://, file:// or mem://", u.Scheme)
	}
	if u.Host == "" && (u.Scheme == "s3" || u.Scheme == "gs" || u.Scheme == "azblob") {
		return nil, fmt.Errorf("the bucket URL %s names no bucket: write %s://BUCKET", RedactBucketURL(raw), u.Scheme)
	}
	return u, nil
}

// OpenBucket opens a bucket URL (s3://, gs://, azblob://, file:///path,
// mem://) without touching the network; Check or the first operation
// finds out whether the bucket is reachable and usable.
func OpenBucket(ctx context.Context, raw string, o BucketOptions) (*Bucket, error) {
	u, err := parseBucketURL(raw)
	if err != nil {
		return nil, err
	}
	if (o.AccessKeyID == "") != (o.SecretAccessKey == "") {
		return nil, errors.New("an S3 access key needs its secret key, and a secret key its access key")
	}
	if o.AccessKeyID != "" && u.Scheme != "s3" {
		return nil, fmt.Errorf("an S3 access key was given, but the bucket URL is %s://, not s3://", u.Scheme)
	}
	k := &Bucket{where: RedactBucketURL(raw), raw: raw, timeout: o.Timeout, prefix: o.Prefix}
	if k.timeout <= 0 {
		k.timeout = DefaultBucketTimeout
	}
	if k.prefix != "" && !strings.HasSuffix(k.prefix, "/") {
		k.prefix += "/"
	}
	for _, s := range []string{o.AccessKeyID, o.SecretAccessKey} {
		if len(s) >= 4 { // shorter is no credential and would mangle the text
			k.secrets = append(k.secrets, s)
		}
	}
	if o.AccessKeyID != "" {
		k.b, err = openS3WithKey(ctx, u, o.AccessKeyID, o.SecretAccessKey)
	} else {
		k.b, err = blob.OpenBucket(ctx, raw)
	}
	if err != nil {
		return nil, fmt.Errorf("open trace bucket %s: %s", k.where, k.redact(err.Error()))
	}
	return k, nil
}

// String names the bucket for health reports, without secrets.
func (k *Bucket) String() string { return "bucket " + k.where + " (prefix " + k.prefix + ")" }

// op runs one bounded operation and describes its failure.
func (k *Bucket) op(ctx context.Context, what string, f func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, k.timeout)
	defer cancel()
	start := time.Now()
	err := f(ctx)
	if err == nil {
		return nil
	}
	return k.describe(ctx, what, err, time.Since(start))
}

// Put writes one object (gocloud writers make it visible on Close).
func (k *Bucket) Put(ctx context.Context, key string, data []byte) error {
	return k.op(ctx, "writing "+key, func(ctx context.Context) error { return k.b.WriteAll(ctx, k.prefix+key, data, nil) })
}

// Get reads one object.
func (k *Bucket) Get(ctx context.Context, key string) ([]byte, error) {
	var data []byte
	err := k.op(ctx, "reading "+key, func(ctx context.Context) (err error) {
		data, err = k.b.ReadAll(ctx, k.prefix+key)
		return err
	})
	return data, err
}

// Delete removes one object.
func (k *Bucket) Delete(ctx context.Context, key string) error {
	return k.op(ctx, "deleting "+key, func(ctx context.Context) error { return k.b.Delete(ctx, k.prefix+key) })
}

// Exists tells whether one object is there.
func (k *Bucket) Exists(ctx context.Context, key string) (bool, error) {
	var ok bool
	err := k.op(ctx, "looking up "+key, func(ctx context.Context) (err error) {
		ok, err = k.b.Exists(ctx, k.prefix+key)
		return err
	})
	return ok, err
}

// List lists the objects under the prefix.
func (k *Bucket) List(ctx context.Context) ([]Object, error) {
	var out []Object
	err := k.op(ctx, "listing the traces", func(ctx context.Context) error {
		it := k.b.List(&blob.ListOptions{Prefix: k.prefix, Delimiter: "/"})
		for {
			o, err := it.Next(ctx)
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return err
			}
			if !o.IsDir {
				out = append(out, Object{Key: strings.TrimPrefix(o.Key, k.prefix), Size: o.Size, ModTime: o.ModTime})
			}
		}
	})
	return out, err
}

// Check proves the store can work: it lists the prefix, then writes and
// deletes a probe object (read, write and delete permission).
func (k *Bucket) Check(ctx context.Context) error {
	if err := k.op(ctx, "listing the traces", func(ctx context.Context) error {
		_, _, err := k.b.ListPage(ctx, blob.FirstPageToken, 1, &blob.ListOptions{Prefix: k.prefix})
		return err
	}); err != nil {
		return err
	}
	var r [8]byte
	_, _ = rand.Read(r[:])
	probe := ".health-check-" + hex.EncodeToString(r[:])
	if err := k.Put(ctx, probe, []byte("queryreplay trace store health check")); err != nil {
		return err
	}
	return k.Delete(ctx, probe)
}

// Close closes the bucket.
func (k *Bucket) Close() error { return k.b.Close() }

// describe turns a driver error into a message that names what is wrong,
// keeps the gocloud error code reachable (errors.As) and holds no secret.
// A missing object is ErrNotFound; a missing bucket is not.
func (k *Bucket) describe(ctx context.Context, what string, err error, took time.Duration) error {
	code := gcerrors.Code(err)
	var api smithy.APIError
	apiCode := ""
	if errors.As(err, &api) {
		apiCode = api.ErrorCode()
	}
	detail := k.redact(err.Error())
	var msg string
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		msg = fmt.Sprintf("trace bucket %s did not answer within %s (while %s); check that its endpoint is reachable from the Grafana server: %s",
			k.where, took.Round(100*time.Millisecond), what, detail)
	case errors.Is(ctx.Err(), context.Canceled):
		msg = fmt.Sprintf("%s in trace bucket %s was cancelled", what, k.where)
	case code == gcerrors.NotFound && apiCode != "NoSuchBucket" && !strings.HasPrefix(what, "listing"):
		return ErrNotFound
	case code == gcerrors.NotFound:
		msg = fmt.Sprintf("trace bucket %s does not exist (while %s); create it or fix the bucket URL: %s", k.where, what, detail)
	case code == gcerrors.PermissionDenied || apiCode == "InvalidAccessKeyId" || apiCode == "SignatureDoesNotMatch" ||
		apiCode == "ExpiredToken" || apiCode == "InvalidToken":
		msg = fmt.Sprintf("trace bucket %s refused %s: permission denied; the credentials need list, read, write and delete rights on prefix %q: %s",
			k.where, what, k.prefix, detail)
	case isNetError(err):
		msg = fmt.Sprintf("cannot reach trace bucket %s (while %s); check its endpoint and the network: %s", k.where, what, detail)
	default:
		msg = fmt.Sprintf("trace bucket %s failed while %s: %s", k.where, what, detail)
	}
	return &bucketError{msg: msg, err: err}
}

func isNetError(err error) bool {
	var ne net.Error
	var oe *net.OpError
	return errors.As(err, &oe) || errors.As(err, &ne)
}

// redact removes the credentials and the raw URL from a driver's text.
func (k *Bucket) redact(s string) string {
	if k.raw != "" {
		s = strings.ReplaceAll(s, k.raw, k.where)
	}
	for _, secret := range k.secrets {
		s = strings.ReplaceAll(s, secret, "xxxxx")
	}
	return s
}

// bucketError is a described driver error; Unwrap keeps gcerrors.Code
// and errors.Is working.
type bucketError struct {
	msg string
	err error
}

func (e *bucketError) Error() string { return e.msg }

// IsBucketError tells whether err is a bucket's failure (unreachable,
// refused, missing): a fault of a service outside the plugin.
func IsBucketError(err error) bool {
	var be *bucketError
	return errors.As(err, &be)
}
func (e *bucketError) Unwrap() error { return e.err }

// urlParamsShown are the bucket URL parameters that hold no secret (the
// drivers' documented options); any other value is masked.
var urlParamsShown = map[string]bool{
	"region": true, "endpoint": true, "use_path_style": true, "s3ForcePathStyle": true, "disable_https": true,
	"profile": true, "role": true, "anonymous": true, "dualstack": true, "fips": true, "hostname_immutable": true,
	"accelerate": true, "ssetype": true, "kmskeyid": true, "awssdk": true, "rate_limiter_capacity": true,
	"request_checksum_calculation": true, "response_checksum_validation": true,
	"universe_domain": true, "access_id": true,
	"storage_account": true, "domain": true, "protocol": true, "cdn": true, "localemu": true,
	"create_dir": true, "metadata": true, "base_url": true, "no_tmp_dir": true, "dir_file_mode": true,
}

// RedactBucketURL is a bucket URL fit for logs, health reports and error
// messages: user information and the values of parameters that are not
// known to be harmless (a SAS token, a private key path) are masked.
func RedactBucketURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(an invalid URL)"
	}
	if u.User != nil {
		u.User = url.User("xxxxx")
	}
	q := u.Query()
	for name, vals := range q {
		if !urlParamsShown[name] {
			for i := range vals {
				vals[i] = "xxxxx"
			}
		}
	}
	u.RawQuery = q.Encode()
	if s, err := url.QueryUnescape(u.String()); err == nil {
		return s // endpoint=http://… reads better than endpoint=http%3A%2F%2F…
	}
	return u.String()
}
