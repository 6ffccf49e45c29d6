package mockserver

// Subscribers returns the number of subscriptions/listen streams registered with the task
// id, -1 when the store holds no such task: a listen that ended must have left none.
func (s *Server) Subscribers(id string) int {
	t := s.store.lookup([]byte(id))
	if t == nil {
		return -1
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.subs)
}
