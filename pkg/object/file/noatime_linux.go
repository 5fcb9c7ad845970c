package file

import "syscall"

// noAtime is the open flag that keeps a read from updating the file's
// access time.
const noAtime = syscall.O_NOATIME
