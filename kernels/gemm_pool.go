package kernels

import "sync"

// parter is work split into parts that may run concurrently.
type parter interface{ run(part int) }

type poolJob struct {
	r    parter
	part int
	wg   *sync.WaitGroup
}

// workers is a set of long-lived goroutines, started on first use and grown
// to the largest split asked for, so that a parallel call starts no goroutine
// and allocates nothing.
var workers struct {
	mu   sync.Mutex
	n    int
	jobs chan poolJob
}

func poolWorker(jobs <-chan poolJob) {
	for j := range jobs {
		j.r.run(j.part)
		j.wg.Done()
	}
}

// runParallel runs r.run(p) for p in [0, parts), part 0 on the calling
// goroutine and the others on the workers, and returns when all are done. wg
// must be idle and owned by r. Parts must not call runParallel themselves.
func runParallel(r parter, parts int, wg *sync.WaitGroup) {
	if parts <= 1 {
		if parts == 1 {
			r.run(0)
		}
		return
	}
	workers.mu.Lock()
	if workers.jobs == nil {
		workers.jobs = make(chan poolJob, 256)
	}
	for workers.n < parts-1 {
		go poolWorker(workers.jobs)
		workers.n++
	}
	jobs := workers.jobs
	workers.mu.Unlock()
	wg.Add(parts - 1)
	for p := 1; p < parts; p++ {
		jobs <- poolJob{r, p, wg}
	}
	r.run(0)
	wg.Wait()
}
