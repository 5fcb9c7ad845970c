package nfs

import "github.com/fsbench/fsbench/pkg/object"

// Calls returns how many calls of each NFSv3 procedure an nfs store has
// made, by procedure name, or nil for another store.
func Calls(s object.Storage) map[string]int64 {
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

// Sizes returns an nfs store's READ and WRITE sizes.
func Sizes(s object.Storage) (rsize, wsize int) {
	n := s.(*nfsStore)
	return n.rsize, n.wsize
}

var nfsProcNames = [nfsProcs]string{"NULL", "GETATTR", "SETATTR", "LOOKUP", "ACCESS", "READLINK", "READ",
	"WRITE", "CREATE", "MKDIR", "SYMLINK", "MKNOD", "REMOVE", "RMDIR", "RENAME", "LINK", "READDIR",
	"READDIRPLUS", "FSSTAT", "FSINFO", "PATHCONF", "COMMIT"}
