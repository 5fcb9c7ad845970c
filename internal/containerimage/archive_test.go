package containerimage

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strings"
	"testing"
)

// imageFile is a file of the image's file system, as its layers hold it.
type imageFile struct {
	hdr  *tar.Header
	data []byte
}

// readArchive returns the files of the single image in an OCI archive,
// the later layers' entries replacing the earlier ones'.
func readArchive(file string) (map[string]imageFile, error) {
	blobs := map[string][]byte{}
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		if h.Typeflag == tar.TypeReg {
			if blobs[path.Clean(h.Name)], err = io.ReadAll(tr); err != nil {
				return nil, fmt.Errorf("%s: %s: %w", file, h.Name, err)
			}
		}
	}
	var index, manifest struct {
		Manifests []struct{ Digest string }
		Config    struct{ Digest string }
		Layers    []struct{ Digest string }
	}
	if err := json.Unmarshal(blobs["index.json"], &index); err != nil || len(index.Manifests) != 1 {
		return nil, fmt.Errorf("%s: index.json: %v, %d manifests", file, err, len(index.Manifests))
	}
	if err := json.Unmarshal(blobs[blobPath(index.Manifests[0].Digest)], &manifest); err != nil {
		return nil, fmt.Errorf("%s: manifest: %w", file, err)
	}
	// docker save's manifest.json, for Docker's classic image store: the
	// same config and layers.
	var docker []struct {
		Config string
		Layers []string
	}
	if err := json.Unmarshal(blobs["manifest.json"], &docker); err != nil || len(docker) != 1 {
		return nil, fmt.Errorf("%s: manifest.json: %v, %d images", file, err, len(docker))
	}
	var layers []string
	for _, l := range manifest.Layers {
		layers = append(layers, blobPath(l.Digest))
	}
	if docker[0].Config != blobPath(manifest.Config.Digest) || !slices.Equal(docker[0].Layers, layers) {
		return nil, fmt.Errorf("%s: manifest.json names %s %v, the OCI manifest %s %v", file,
			docker[0].Config, docker[0].Layers, manifest.Config.Digest, layers)
	}
	files := map[string]imageFile{}
	for _, l := range manifest.Layers {
		if err := readLayer(blobs[blobPath(l.Digest)], files); err != nil {
			return nil, fmt.Errorf("%s: layer %s: %w", file, l.Digest, err)
		}
	}
	return files, nil
}

func blobPath(digest string) string { return "blobs/" + strings.Replace(digest, ":", "/", 1) }

func readLayer(blob []byte, files map[string]imageFile) error {
	zr, err := gzip.NewReader(bytes.NewReader(blob))
	if err != nil {
		return err
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		var data []byte
		if h.Typeflag == tar.TypeReg && h.Size < 1<<20 {
			if data, err = io.ReadAll(tr); err != nil {
				return err
			}
		}
		files["/"+path.Clean(h.Name)] = imageFile{h, data}
	}
}

// TestImageFiles checks the files a scratch base lacks and the image adds:
// the build host's CA certificates, the non-root user and a /tmp anyone
// may write to, all owned by root; and the binary.
func TestImageFiles(t *testing.T) {
	img := image(t)
	files, err := readArchive(img.archive)
	if err != nil {
		t.Fatal(err)
	}
	const cas = "/etc/ssl/certs/ca-certificates.crt"
	host, err := os.ReadFile(cas)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(files[cas].data, host) {
		t.Errorf("%s: %d bytes, not the build host's %d", cas, len(files[cas].data), len(host))
	}
	if p := string(files["/etc/passwd"].data); !strings.Contains(p, "\nnonroot:x:65532:65532:nonroot:/home/nonroot:") {
		t.Errorf("/etc/passwd lacks the user nonroot (65532):\n%s", p)
	}
	if g := string(files["/etc/group"].data); !strings.Contains(g, "\nnonroot:x:65532:") {
		t.Errorf("/etc/group lacks the group nonroot (65532):\n%s", g)
	}
	want := map[string]struct {
		mode     int64
		uid, gid int
	}{
		"/tmp":                   {01777, 0, 0},
		"/home/nonroot":          {0o755, 65532, 65532},
		"/etc/passwd":            {0o644, 0, 0},
		cas:                      {0o644, 0, 0},
		"/usr/local/bin/fsbench": {0o755, 0, 0},
	}
	for name, w := range want {
		f, ok := files[name]
		if !ok {
			t.Errorf("%s: not in the image", name)
			continue
		}
		if mode := f.hdr.Mode & 07777; mode != w.mode || f.hdr.Uid != w.uid || f.hdr.Gid != w.gid {
			t.Errorf("%s: mode %o owner %d:%d, want %o %d:%d", name, mode, f.hdr.Uid, f.hdr.Gid, w.mode, w.uid, w.gid)
		}
	}
}
