package object

// NFSCalls returns how many calls of each NFSv3 procedure an nfs store
// has made, by procedure name, or nil for another store.
func NFSCalls(s Storage) map[string]int64 {
	n, ok := s.(*nfsStore)
	if !ok {
		return nil
	}
	out := map[string]int64{}
	for proc := range n.c.calls {
		if v := n.c.calls[proc].Load(); v > 0 {
			out[nfsProcNames[proc]] = v
		}
	}
	return out
}

// NFSSizes returns an nfs store's READ and WRITE sizes.
func NFSSizes(s Storage) (rsize, wsize int) {
	n := s.(*nfsStore)
	return n.rsize, n.wsize
}

var nfsProcNames = [nfsProcs]string{"NULL", "GETATTR", "SETATTR", "LOOKUP", "ACCESS", "READLINK", "READ",
	"WRITE", "CREATE", "MKDIR", "SYMLINK", "MKNOD", "REMOVE", "RMDIR", "RENAME", "LINK", "READDIR",
	"READDIRPLUS", "FSSTAT", "FSINFO", "PATHCONF", "COMMIT"}

// DirectPath reports whether s (an S3 store, perhaps behind a prefix)
// sends its object requests past the SDK's middleware.
func DirectPath(s Storage) bool {
	for {
		switch v := s.(type) {
		case *s3Store:
			return v.direct != nil
		case Wrapper:
			s = v.Unwrap()
		default:
			return false
		}
	}
}

// SDKPath makes s (an S3 store, perhaps behind a prefix) send every
// request through the SDK, as before the direct path, for comparisons.
func SDKPath(s Storage) {
	for {
		switch v := s.(type) {
		case *s3Store:
			v.direct = nil
			return
		case Wrapper:
			s = v.Unwrap()
		default:
			return
		}
	}
}
