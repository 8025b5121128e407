package door

import (
	"encoding/json"
	"github.com/murmur/mur/internal/images"
	"net/http"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// CardPath is where the door serves its agent card.
const CardPath = "/.well-known/agent-card.json"

// Skill is one skill the card lists; the session makes one per tool.
type Skill struct {
	ID          string
	Name        string
	Description string
}

// bearerScheme names the card's one security scheme.
const bearerScheme a2a.SecuritySchemeName = "bearer"

// card is the A2A agent card plus the capsule's peerTasks, which A2A has no
// field for; clients that do not know it ignore it.
type card struct {
	*a2a.AgentCard
	PeerTasks peerTasksCard `json:"peerTasks"`
}

type peerTasksCard struct {
	Accept bool `json:"accept"`
}

func (d *Door) card() *a2a.AgentCard {
	c := &a2a.AgentCard{
		Name:        d.cfg.Name,
		Version:     d.cfg.Version,
		Description: d.cfg.Description,
		SupportedInterfaces: []*a2a.AgentInterface{{
			URL: d.URL(), ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: a2a.Version,
		}},
		Capabilities: a2a.AgentCapabilities{
			// task_acceptance: none answers SendStreamingMessage -32004.
			Streaming:         d.cfg.Queue.Policy().Acceptance != "none",
			ExtendedAgentCard: d.cfg.Auth != nil,
		},
		DefaultInputModes:  d.inputModes(),
		DefaultOutputModes: []string{"text/plain"},
		Skills:             []a2a.AgentSkill{},
	}
	if c.Description == "" {
		c.Description = "Murmur capsule " + d.cfg.Name
	}
	for _, s := range d.cfg.Skills {
		c.Skills = append(c.Skills, a2a.AgentSkill{ID: s.ID, Name: s.Name, Description: s.Description, Tags: []string{"tool"}})
	}
	if d.cfg.Auth != nil {
		c.SecuritySchemes = a2a.NamedSecuritySchemes{
			bearerScheme: a2a.HTTPAuthSecurityScheme{Scheme: "Bearer", Description: "a token mur run printed for this session"},
		}
		c.SecurityRequirements = a2a.SecurityRequirementsOptions{{bearerScheme: a2a.SecuritySchemeScopes{}}}
	}
	return c
}

func (d *Door) serveCard(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	body, err := json.Marshal(card{AgentCard: d.card(), PeerTasks: peerTasksCard{Accept: d.cfg.PeerTasks}})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Access-Control-Allow-Origin", "*")
	_, _ = w.Write(body)
}

// inputModes are what a message may carry: text, and the image types the
// door admits unless the capsule's model is handed text only.
func (d *Door) inputModes() []string {
	if d.cfg.TextOnly != "" {
		return []string{"text/plain"}
	}
	return append([]string{"text/plain"}, images.MediaTypes()...)
}
