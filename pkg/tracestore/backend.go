package tracestore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
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
	Exists(ctx context.Context, key string) (bool, error)
	List(ctx context.Context) ([]Object, error)
	// Check proves the backend can list, write and delete (CheckHealth).
	Check(ctx context.Context) error
	// String names the backend for people, without secrets.
	String() string
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

// Exists tells whether one object is there.
func (d *Dir) Exists(_ context.Context, key string) (bool, error) {
	p, err := d.file(key)
	if err != nil {
		return false, err
	}
	if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	return true, nil
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

// Check writes and removes a probe file: the directory exists and is
// writable.
func (d *Dir) Check(ctx context.Context) error {
	if _, err := d.List(ctx); err != nil {
		return err
	}
	f, err := os.CreateTemp(d.path, ".health-check-*")
	if err != nil {
		return fmt.Errorf("trace store directory %s is not writable: %w", d.path, err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// String names the directory.
func (d *Dir) String() string { return "directory " + d.path }

// Close does nothing for a directory.
func (d *Dir) Close() error { return nil }
