package bench

// OwnDir is a run's own directory, for commands other than bench that
// keep their files in one (fsbench train): made with a name that cannot
// clash, removed through a handle on its parent, so that it is found even
// when its path no longer leads to it.
type OwnDir struct{ d *ownDir }

// CreateOwnDir makes a new directory of a run under parent.
func CreateOwnDir(parent string) (*OwnDir, error) {
	d, err := makeOwnDir(parent)
	if err != nil {
		return nil, err
	}
	return &OwnDir{d}, nil
}

// CreateRunDir makes the directory path, which must not exist.
func CreateRunDir(path string) (*OwnDir, error) {
	o := Options{RunDir: path}
	d, err := o.makeOwn("")
	if err != nil {
		return nil, err
	}
	return &OwnDir{d}, nil
}

// Path is the directory's absolute path.
func (d *OwnDir) Path() string { return d.d.path }

// Remove deletes the directory and the files in it (only those), and
// releases the handle; what someone else removed first is not an error.
func (d *OwnDir) Remove() error {
	defer d.d.parent.Close()
	return d.d.remove(nil)
}

// Close releases the handle and keeps the directory.
func (d *OwnDir) Close() { d.d.parent.Close() }
