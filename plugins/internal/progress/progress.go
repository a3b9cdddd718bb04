package progress

import (
	"context"
	"log/slog"
	"time"
)

// progressEvery is how often a long build or compile step says it is still
// running.
const progressEvery = 5 * time.Second

// Track logs that plugin's step (build, compile) started, at level
// start, then every progressEvery at Info that it is still running, and
// once done is called, that it finished, with the elapsed time: at Info
// when it logged at Info before, else at Debug. A nil log tracks nothing.
// The goroutine it starts exits when done is called or ctx ends; done
// must be called exactly once.
func Track(ctx context.Context, log *slog.Logger, plugin, step string, start slog.Level) (done func(error)) {
	if log == nil {
		return func(error) {}
	}
	t0 := time.Now()
	log.Log(ctx, start, "plugin step started", "plugin", plugin, "step", step)
	stop := make(chan struct{})
	ticked := make(chan bool, 1)
	go func() {
		tk := time.NewTicker(progressEvery)
		defer tk.Stop()
		n := false
		defer func() { ticked <- n }()
		for {
			select {
			case <-tk.C:
				n = true
				log.Info("plugin step running", "plugin", plugin, "step", step, "elapsed", time.Since(t0).Round(time.Second))
			case <-stop:
				return
			case <-ctx.Done():
				<-stop
				return
			}
		}
	}()
	return func(err error) {
		close(stop)
		lvl := start
		if <-ticked {
			lvl = slog.LevelInfo
		}
		if err != nil {
			lvl = slog.LevelDebug // the loader logs the failure itself
		}
		log.Log(ctx, lvl, "plugin step done", "plugin", plugin, "step", step, "dur", time.Since(t0), "ok", err == nil)
	}
}
