package tracestore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	// The URL schemes a bucketURL may use: file:// and mem://. Cloud
	// drivers (s3blob, gcsblob, azureblob) register the same way; they are
	// left out to keep their SDKs out of the plugin binary until someone
	// needs them.
	_ "gocloud.dev/blob/fileblob"
	_ "gocloud.dev/blob/memblob"
)

// ErrNotFound is returned for a trace the store does not have.
var ErrNotFound = errors.New("trace not found")

// Object is one stored object of a Backend.
type Object struct {
	Key     string
	Size    int64
	ModTime time.Time
}

// Backend is where bundles persist: a directory or a bucket. Keys are flat
// file names. Implementations must be safe for concurrent use and make a
// Put visible to other processes only once it is complete.
type Backend interface {
	Put(ctx context.Context, key string, data []byte) error
	Get(ctx context.Context, key string) ([]byte, error) // ErrNotFound when absent
	Delete(ctx context.Context, key string) error        // ErrNotFound when absent
	List(ctx context.Context) ([]Object, error)
	Close() error
}

// Dir persists objects as files in one directory.
type Dir struct{ path string }

// OpenDir creates the directory (0700: traces hold query text) if needed.
func OpenDir(path string) (*Dir, error) {
	if err := os.MkdirAll(path, 0o700); err != nil {
		return nil, fmt.Errorf("trace store directory: %w", err)
	}
	return &Dir{path: path}, nil
}

// Path is the directory.
func (d *Dir) Path() string { return d.path }

func (d *Dir) file(key string) (string, error) {
	if key == "" || strings.ContainsAny(key, `/\`) || strings.HasPrefix(key, ".") {
		return "", fmt.Errorf("invalid object key %q", key)
	}
	return filepath.Join(d.path, key), nil
}

// Put writes a temporary file and renames it, so readers never see half.
func (d *Dir) Put(_ context.Context, key string, data []byte) (err error) {
	p, err := d.file(key)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(d.path, ".tmp-"+key+"-*")
	if err != nil {
		return fmt.Errorf("store %s: %w", key, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("store %s: %w", key, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("store %s: %w", key, err)
	}
	if err = os.Rename(f.Name(), p); err != nil {
		return fmt.Errorf("store %s: %w", key, err)
	}
	return nil
}

// Get reads one object.
func (d *Dir) Get(_ context.Context, key string) ([]byte, error) {
	p, err := d.file(key)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNotFound
	}
	return b, err
}

// Delete removes one object.
func (d *Dir) Delete(_ context.Context, key string) error {
	p, err := d.file(key)
	if err != nil {
		return err
	}
	if err := os.Remove(p); errors.Is(err, fs.ErrNotExist) {
		return ErrNotFound
	} else if err != nil {
		return err
	}
	return nil
}

// List lists the objects, skipping temporary files.
func (d *Dir) List(_ context.Context) ([]Object, error) {
	ents, err := os.ReadDir(d.path)
	if err != nil {
		return nil, fmt.Errorf("list trace store: %w", err)
	}
	var out []Object
	for _, e := range ents {
		if e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		out = append(out, Object{Key: e.Name(), Size: info.Size(), ModTime: info.ModTime()})
	}
	return out, nil
}

// Close does nothing for a directory.
func (d *Dir) Close() error { return nil }

// Bucket persists objects in a gocloud.dev blob bucket under a prefix.
type Bucket struct {
	b      *blob.Bucket
	prefix string
}

// OpenBucket opens a bucket URL (file:///path, mem://, or any scheme whose
// driver is linked in), keeping objects under prefix.
func OpenBucket(ctx context.Context, url, prefix string) (*Bucket, error) {
	b, err := blob.OpenBucket(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("open trace bucket: %w", err)
	}
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	return &Bucket{b: b, prefix: prefix}, nil
}

// Put writes one object (gocloud writers make it visible on Close).
func (k *Bucket) Put(ctx context.Context, key string, data []byte) error {
	if err := k.b.WriteAll(ctx, k.prefix+key, data, nil); err != nil {
		return fmt.Errorf("store %s: %w", key, err)
	}
	return nil
}

// Get reads one object.
func (k *Bucket) Get(ctx context.Context, key string) ([]byte, error) {
	b, err := k.b.ReadAll(ctx, k.prefix+key)
	if gcerrors.Code(err) == gcerrors.NotFound {
		return nil, ErrNotFound
	}
	return b, err
}

// Delete removes one object.
func (k *Bucket) Delete(ctx context.Context, key string) error {
	err := k.b.Delete(ctx, k.prefix+key)
	if gcerrors.Code(err) == gcerrors.NotFound {
		return ErrNotFound
	}
	return err
}

// List lists the objects under the prefix.
func (k *Bucket) List(ctx context.Context) ([]Object, error) {
	it := k.b.List(&blob.ListOptions{Prefix: k.prefix, Delimiter: "/"})
	var out []Object
	for {
		o, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("list trace bucket: %w", err)
		}
		if o.IsDir {
			continue
		}
		out = append(out, Object{Key: strings.TrimPrefix(o.Key, k.prefix), Size: o.Size, ModTime: o.ModTime})
	}
}

// Close closes the bucket.
func (k *Bucket) Close() error { return k.b.Close() }
