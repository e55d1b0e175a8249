package tracestore

import (
	"context"
	"fmt"
	"net/url"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	gcaws "gocloud.dev/aws"
	"gocloud.dev/blob"
	"gocloud.dev/blob/s3blob"
)

// openS3WithKey opens an s3:// URL with static credentials. s3blob's URL
// opener has no way to take credentials other than through the process
// environment (shared by every datasource instance), so this reads the
// S3-specific parameters s3blob documents itself and hands the rest to
// gocloud.dev/aws, exactly as s3blob.URLOpener does, then sets the
// credentials on the resulting config.
func openS3WithKey(ctx context.Context, u *url.URL, keyID, secret string) (*blob.Bucket, error) {
	q := u.Query()
	for _, p := range []string{"anonymous", "profile", "role"} {
		if q.Has(p) {
			return nil, fmt.Errorf("the bucket URL sets %s, which conflicts with the S3 access key of the settings: use one or the other", p)
		}
	}
	var opts []func(*s3.Options)
	var bo s3blob.Options
	for _, p := range []string{"use_path_style", "s3ForcePathStyle", "disable_https", "accelerate"} {
		v := q.Get(p)
		if v == "" {
			continue
		}
		q.Del(p)
		on, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("the bucket URL's %s=%q is not true or false", p, v)
		}
		switch p {
		case "use_path_style", "s3ForcePathStyle":
			opts = append(opts, func(o *s3.Options) { o.UsePathStyle = on })
		case "disable_https":
			opts = append(opts, func(o *s3.Options) { o.EndpointOptions.DisableHTTPS = on })
		case "accelerate":
			opts = append(opts, func(o *s3.Options) { o.UseAccelerate = on })
		}
	}
	if v := q.Get("ssetype"); v != "" {
		q.Del("ssetype")
		bo.EncryptionType = types.ServerSideEncryption(v)
	}
	if v := q.Get("kmskeyid"); v != "" {
		q.Del("kmskeyid")
		bo.KMSEncryptionID = v
	}
	cfg, err := gcaws.V2ConfigFromURLParams(ctx, q)
	if err != nil {
		return nil, err
	}
	cfg.Credentials = aws.NewCredentialsCache(credentials.NewStaticCredentialsProvider(keyID, secret, ""))
	bo.RequestChecksumCalculation = cfg.RequestChecksumCalculation
	return s3blob.OpenBucket(ctx, s3.NewFromConfig(cfg, opts...), u.Host, &bo)
}
