package attention

import (
	"runtime"
	"sync"
)

// runner is work split into parts that may run concurrently.
type runner interface{ run(part int) }

type job struct {
	r    runner
	part int
	wg   *sync.WaitGroup
}

// pool is a set of long-lived worker goroutines, started on first use and
// grown to GOMAXPROCS−1, so that a parallel call starts no goroutine and
// allocates nothing.
var pool struct {
	mu      sync.Mutex
	workers int
	jobs    chan job
}

func worker(jobs <-chan job) {
	for j := range jobs {
		j.r.run(j.part)
		j.wg.Done()
	}
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
	jobs := pool.jobs
	pool.mu.Unlock()
	wg.Add(parts - 1)
	for p := 1; p < parts; p++ {
		jobs <- job{r, p, wg}
	}
	r.run(0)
	wg.Wait()
}
