package history

import (
	"testing"

	"github.com/fsbench/fsbench/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }
