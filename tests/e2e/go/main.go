// Command pprofgen writes two real runtime/pprof profiles for the end-to-end tests: a CPU
// profile of about one second of busy work and a heap profile. Standard library only.
//
//	go run . -cpu cpu.pprof -heap heap.pprof [-seconds 1]
package main

import (
	"crypto/sha256"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"time"
)

// keep holds allocations until the heap profile is written, so that they show as in use.
var keep [][]byte

// spin hashes in a loop until the deadline; two levels of calls give the stacks some depth.
func spin(deadline time.Time) uint64 {
	var acc uint64
	buf := make([]byte, 4096)
	for time.Now().Before(deadline) {
		acc += hashRound(buf)
	}
	return acc
}

func hashRound(buf []byte) uint64 {
	sum := sha256.Sum256(buf)
	buf[0] = sum[0]
	return uint64(sum[1])
}

// allocate makes objects of a few sizes so that the heap profile has several stacks.
func allocate() {
	for i := 0; i < 2000; i++ {
		keep = append(keep, make([]byte, 512+i%7*1024))
	}
	for i := 0; i < 200; i++ {
		keep = append(keep, make([]byte, 64<<10))
	}
}

func run(cpuPath, heapPath string, seconds float64) error {
	cf, err := os.Create(cpuPath)
	if err != nil {
		return err
	}
	defer cf.Close()
	if err := pprof.StartCPUProfile(cf); err != nil {
		return err
	}
	acc := spin(time.Now().Add(time.Duration(seconds * float64(time.Second))))
	pprof.StopCPUProfile()
	if err := cf.Close(); err != nil {
		return err
	}

	runtime.MemProfileRate = 4096
	allocate()
	runtime.GC()
	hf, err := os.Create(heapPath)
	if err != nil {
		return err
	}
	defer hf.Close()
	if err := pprof.Lookup("heap").WriteTo(hf, 0); err != nil {
		return err
	}
	fmt.Printf("cpu=%s heap=%s work=%d kept=%d\n", cpuPath, heapPath, acc, len(keep))
	return hf.Close()
}

func main() {
	cpu := flag.String("cpu", "cpu.pprof", "where to write the CPU profile")
	heap := flag.String("heap", "heap.pprof", "where to write the heap profile")
	seconds := flag.Float64("seconds", 1, "seconds of busy work under the CPU profiler")
	flag.Parse()
	if err := run(*cpu, *heap, *seconds); err != nil {
		fmt.Fprintln(os.Stderr, "pprofgen:", err)
		os.Exit(1)
	}
}
