package attention

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// runner is work split into parts that may run concurrently.
type runner interface{ run(part int) }

type job struct {
	r    runner
	part int
	wg   *sync.WaitGroup
}

// pool is a set of long-lived worker goroutines, started on first use and
// grown to a parallel call's need (at most GOMAXPROCS−1), so that a parallel
// call starts no goroutine and allocates nothing. Every pool.idle, each worker
// between jobs exits if the pool holds more than GOMAXPROCS−1 workers and no
// job is waiting, so the pool shrinks when GOMAXPROCS falls.
var pool struct {
	mu      sync.Mutex
	workers int          // guarded by mu
	pending atomic.Int64 // jobs announced under mu and not yet received by a worker
	jobs    chan job
	idle    atomic.Int64 // nanoseconds
}

func init() { pool.idle.Store(int64(time.Second)) }

func worker(jobs <-chan job) {
	idle := time.Duration(pool.idle.Load())
	tick := time.NewTicker(idle)
	defer tick.Stop()
	for {
		select {
		case j := <-jobs:
			pool.pending.Add(-1)
			j.r.run(j.part)
			j.wg.Done()
		case <-tick.C:
			if retire() {
				return
			}
			if d := time.Duration(pool.idle.Load()); d != idle {
				idle = d
				tick.Reset(idle)
			}
		}
	}
}

// retire reports whether a worker between jobs exits, counting it out if so:
// when the pool holds more than GOMAXPROCS−1 workers and no job is waiting.
func retire() bool {
	pool.mu.Lock()
	defer pool.mu.Unlock()
	if pool.pending.Load() == 0 && pool.workers > procs()-1 {
		pool.workers--
		return true
	}
	return false
}

// procs returns how many goroutines a parallel call may use.
func procs() int { return runtime.GOMAXPROCS(0) }

// runParallel runs r.run(p) for p in [0, parts), part 0 on the calling
// goroutine and the others on the pool, and returns when all are done. wg must
// be idle and owned by the caller's long-lived state. Parts must not call
// runParallel themselves.
func runParallel(r runner, parts int, wg *sync.WaitGroup) {
	if parts <= 1 {
		if parts == 1 {
			r.run(0)
		}
		return
	}
	pool.mu.Lock()
	if pool.jobs == nil {
		pool.jobs = make(chan job, 256)
	}
	for pool.workers < parts-1 {
		go worker(pool.jobs)
		pool.workers++
	}
	pool.pending.Add(int64(parts - 1)) // before any worker may retire: see retire
	jobs := pool.jobs
	pool.mu.Unlock()
	wg.Add(parts - 1)
	for p := 1; p < parts; p++ {
		jobs <- job{r, p, wg}
	}
	r.run(0)
	wg.Wait()
}
